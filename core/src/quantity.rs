//! Kubernetes resource quantities (`500m`, `64Gi`, `1e3`, `8`), read as the scheduler counts
//! them: CPU in millicores and everything else in whole units, rounded up
//! (`Quantity.MilliValue()` and `Quantity.Value()` in apimachinery), and, for a pod's parts that
//! the scheduler adds before it rounds, in finer units rounded down.

/// The suffixes of apimachinery's quantity grammar: `Ki` .. `Ei` (powers of 1024), `n` .. `E`
/// (powers of 10), and `e<n>` / `E<n>` exponents: (decimal exponent, binary exponent in units
/// of 1024).
fn suffix(s: &[u8]) -> Option<(i32, u32)> {
    Some(match s {
        b"" => (0, 0),
        [b'K', b'i'] => (0, 1),
        [b'M', b'i'] => (0, 2),
        [b'G', b'i'] => (0, 3),
        [b'T', b'i'] => (0, 4),
        [b'P', b'i'] => (0, 5),
        [b'E', b'i'] => (0, 6),
        [b'n'] => (-9, 0),
        [b'u'] => (-6, 0),
        [b'm'] => (-3, 0),
        [b'k'] => (3, 0),
        [b'M'] => (6, 0),
        [b'G'] => (9, 0),
        [b'T'] => (12, 0),
        [b'P'] => (15, 0),
        [b'E'] => (18, 0),
        [b'e' | b'E', rest @ ..] => {
            let (negative, digits) = match rest {
                [b'-', digits @ ..] => (true, digits),
                [b'+', digits @ ..] => (false, digits),
                digits => (false, digits),
            };
            if digits.is_empty() || digits.len() > 4 || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let n = digits.iter().fold(0i32, |n, d| n * 10 + i32::from(d - b'0'));
            (if negative { -n } else { n }, 0)
        }
        _ => return None,
    })
}

/// A quantity as written: `mantissa × 10^exponent × 1024^binary`, exactly (the decimal point
/// folded into `exponent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Exact {
    mantissa: u128,
    exponent: i32,
    binary: u32,
}

/// Reads `text` in one pass over its bytes (this runs for every resource of every Node
/// listed); `None` when it is not a quantity or is negative (`-0` is zero), or has more
/// significant digits than 128 bits hold: no claim is made on what cannot be read.
fn exact(text: &str) -> Option<Exact> {
    let mut bytes = text.trim_ascii().as_bytes();
    // One sign, read once: `--1` is no quantity.
    let negative = match bytes.first() {
        Some(b'+') => {
            bytes = &bytes[1..];
            false
        }
        Some(b'-') => {
            bytes = &bytes[1..];
            true
        }
        _ => false,
    };
    let (mut mantissa, mut digits, mut fraction_digits, mut point) = (0u128, 0usize, 0i32, false);
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
                digits += 1;
                fraction_digits += i32::from(point);
            }
            b'.' if !point => point = true,
            _ => break,
        }
        at += 1;
    }
    if digits == 0 {
        return None;
    }
    let (decimal, binary) = suffix(&bytes[at..])?;
    if mantissa == 0 {
        return Some(Exact { mantissa: 0, exponent: 0, binary: 0 });
    }
    if negative {
        // Any other negative amount is no request a node can meet, and no node offers it.
        return None;
    }
    Some(Exact { mantissa, exponent: decimal - fraction_digits, binary })
}

impl Exact {
    /// The amount in units `10^shift` times finer than its own, rounded up or down; `None`
    /// past `u128`.
    fn scaled(self, shift: i32, round_up: bool) -> Option<u128> {
        if self.mantissa == 0 {
            return Some(0);
        }
        let value = self.mantissa.checked_mul(1024u128.checked_pow(self.binary)?)?;
        let exponent = self.exponent + shift;
        if exponent >= 0 {
            return value.checked_mul(10u128.checked_pow(exponent.unsigned_abs())?);
        }
        Some(match 10u128.checked_pow(exponent.unsigned_abs()) {
            Some(d) if round_up => value.div_ceil(d),
            Some(d) => value / d,
            // Smaller than any unit: a non-zero amount rounds up to one, or down to none.
            None => u128::from(round_up),
        })
    }
}

/// The scheduler's unit of `resource` as a power of ten of what is written: CPU is counted
/// in millicores (`MilliValue()`), everything else in whole units (`Value()`).
fn unit_shift(resource: &str) -> i32 {
    if resource == "cpu" { 3 } else { 0 }
}

/// How the scheduler counts `amount` of `resource` on its own (a Node's allocatable): CPU in
/// millicores, the rest in units, rounded up; `None` when it is not a quantity or is past
/// `u64` (no node has that much of anything).
pub fn scheduler_units(resource: &str, amount: &str) -> Option<u64> {
    u64::try_from(exact(amount)?.scaled(unit_shift(resource), true)?).ok()
}

/// How many fine units (10⁻⁹ of the scheduler's unit) make one scheduler unit.
pub const FINE: u128 = 1_000_000_000;

/// `amount` of `resource` in fine units, rounded down: the scheduler adds a pod's amounts
/// exactly and rounds their total once (`PodRequests`, then `MilliValue()` / `Value()`), so
/// amounts are added in these and rounded with [`fine_to_units`]. Rounding each part down
/// keeps the total at or below the scheduler's: a demand is never over-counted.
pub fn fine_units(resource: &str, amount: &str) -> Option<u128> {
    exact(amount)?.scaled(unit_shift(resource) + 9, false)
}

/// A total in fine units as the scheduler's units, rounded up (saturating).
pub fn fine_to_units(fine: u128) -> u64 {
    u64::try_from(fine.div_ceil(FINE)).unwrap_or(u64::MAX)
}

/// `units` of `resource` as a user writes them: `500m` / `2` CPUs, `64Gi` of memory when it
/// is a whole number of GiB (or Mi, Ki), else plain units.
pub fn show(resource: &str, units: u64) -> String {
    if resource == "cpu" {
        return if units.is_multiple_of(1000) { (units / 1000).to_string() } else { format!("{units}m") };
    }
    if resource == "memory" || resource == "ephemeral-storage" || resource.starts_with("hugepages-") {
        for (suffix, size) in [("Ti", 1u64 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
            if units >= size && units.is_multiple_of(size) {
                return format!("{}{suffix}", units / size);
            }
        }
    }
    units.to_string()
}

/// A JSON number read as a float (`0.5`, `1e21`), written back as quantity text as serde_json
/// writes it (`0.5`, `1e+21`), which reads as the same amount; Rust's own float formatting
/// would add 13 KB to a module.
pub fn number_text(v: f64) -> String {
    serde_json::Value::from(v).to_string()
}

/// A quantity as written: the string, or a JSON number's value as text (`0.5`), as the
/// apiserver reads both. k8s-openapi's `Quantity` decodes the same, but writes a float with
/// Rust's float formatting, which was 13 KB of every module that decodes Kubeflow jobs; this
/// one writes it with [`number_text`] (`1e+21` where Rust writes 22 digits: the same amount).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Quantity(pub String);

impl<'de> serde::Deserialize<'de> for Quantity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Quantity, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Quantity;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("Quantity")
            }
            fn visit_str<E>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity(number_text(v)))
            }
        }
        d.deserialize_any(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_the_scheduler_counts_them() {
        // apimachinery's own examples (resource/quantity_test.go), as MilliValue / Value.
        for (text, milli) in [
            ("0", 0),
            ("1", 1000),
            ("500m", 500),
            ("0.5", 500),
            ("1.5", 1500),
            (".5", 500),
            ("5.", 5000),
            ("1001m", 1001),
            ("0.1m", 1),
            ("1n", 1),
            ("100u", 1),
            ("1k", 1_000_000),
            ("1e3", 1_000_000),
            ("1E3", 1_000_000),
            ("1e-3", 1),
            ("+2", 2000),
            ("-0", 0),
            ("64", 64_000),
        ] {
            assert_eq!(scheduler_units("cpu", text), Some(milli), "{text}");
        }
        for (text, units) in [
            ("1Ki", 1024),
            ("64Gi", 64 << 30),
            ("1.5Gi", 3 << 29),
            ("527390432Ki", 527_390_432 * 1024),
            ("128974848", 128_974_848),
            ("129e6", 129_000_000),
            ("123Mi", 123 << 20),
            ("1M", 1_000_000),
            ("0.5", 1),
            ("8", 8),
            ("1E", 1_000_000_000_000_000_000),
            ("7Ei", 7 << 60),
        ] {
            assert_eq!(scheduler_units("memory", text), Some(units), "{text}");
        }
        for bad in [
            "", "m", "Gi", "1.2.3", "1Qi", "1e", "1ee3", "-1", "-1Gi", "--0", "+-0", "1 Gi", "1e99999", "17Ei", "0x10",
            "∞",
        ] {
            assert_eq!(scheduler_units("memory", bad), None, "{bad:?}");
        }
        // A long run of signs is read in one step, not one call per sign.
        assert_eq!(scheduler_units("memory", &format!("{}1", "-".repeat(100_000))), None);
        assert_eq!(scheduler_units("cpu", "1e-40"), Some(1), "any non-zero amount is at least one unit");
        assert_eq!(scheduler_units("cpu", "0.000"), Some(0));
    }

    #[test]
    fn amounts_add_up_before_they_are_rounded() {
        // Two halves of a byte are one byte, not two; a millicore's tenth counts towards one.
        let half = fine_units("memory", "0.5").unwrap();
        assert_eq!((fine_to_units(half), fine_to_units(half + half)), (1, 1));
        let tenth = fine_units("cpu", "100u").unwrap();
        assert_eq!(fine_to_units(tenth * 10), 1);
        assert_eq!(fine_to_units(tenth * 11), 2);
        assert_eq!(fine_units("cpu", "1500m"), Some(1500 * FINE));
        assert_eq!(fine_units("memory", "64Gi"), Some((64u128 << 30) * FINE));
        assert_eq!(fine_units("cpu", "1e-40"), Some(0), "below the finest unit: rounded down to nothing");
        assert_eq!(fine_units("cpu", "-1"), None);
        assert_eq!(fine_to_units(u128::MAX), u64::MAX);
    }

    /// Written as a string or as a number, a quantity reads the same (a float as serde_json
    /// writes it); anything else is refused as k8s-openapi's `Quantity` refuses it.
    #[test]
    fn quantities_are_read_from_strings_and_numbers() {
        let read = |json: &str| crate::decode::from_str::<Quantity>(json).map(|q| q.0);
        assert_eq!(read(r#""500m""#), Ok("500m".to_string()));
        assert_eq!(read("8"), Ok("8".to_string()));
        assert_eq!(read("-2"), Ok("-2".to_string()));
        assert_eq!(read("0.5"), Ok("0.5".to_string()));
        assert_eq!(read("1e21"), Ok("1e+21".to_string()));
        assert_eq!(read("1000000000000000000000"), Ok("1e+21".to_string()));
        assert_eq!(scheduler_units("memory", &read("1e18").unwrap()), Some(1_000_000_000_000_000_000));
        assert_eq!(scheduler_units("memory", "1e+18"), Some(1_000_000_000_000_000_000));
        assert_eq!(scheduler_units("cpu", &read("1e-3").unwrap()), Some(1));
        assert_eq!(scheduler_units("cpu", &read("0.5").unwrap()), Some(500));
        assert_eq!(read("true"), Err("invalid type: boolean `true`, expected Quantity".to_string()));
        assert_eq!(read("{}"), Err("invalid type: map, expected Quantity".to_string()));
    }

    #[test]
    fn amounts_are_shown_as_users_write_them() {
        assert_eq!(show("cpu", 96_000), "96");
        assert_eq!(show("cpu", 1500), "1500m");
        assert_eq!(show("memory", 64 << 30), "64Gi");
        assert_eq!(show("memory", 1000), "1000");
        assert_eq!(show("hugepages-2Mi", 4 << 20), "4Mi");
        assert_eq!(show("nvidia.com/gpu", 8), "8");
    }
}
