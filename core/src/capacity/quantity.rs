//! Kubernetes resource quantities (`500m`, `64Gi`, `1e3`, `8`), read as the scheduler counts
//! them: CPU in millicores and everything else in whole units, each rounded up
//! (`Quantity.MilliValue()` and `Quantity.Value()` in apimachinery).

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

/// `text` as an amount `scale` times finer than its unit (`scale_exponent` 3: millis),
/// rounded up; `None` when it is not a quantity, is negative, or does not fit in a `u64`
/// (no node has that much of anything, and no claim is made on what cannot be read). Read in
/// one pass over the bytes: this runs for every resource of every Node listed.
fn scaled(text: &str, scale_exponent: i32) -> Option<u64> {
    let mut bytes = text.trim_ascii().as_bytes();
    match bytes.first() {
        Some(b'+') => bytes = &bytes[1..],
        // `-0` is zero; any other negative amount is no request a node can meet.
        Some(b'-') => return scaled(&text.trim_ascii()[1..], scale_exponent).filter(|v| *v == 0),
        _ => {}
    }
    // The significant digits as one integer, in 64-bit arithmetic: an amount past
    // 18 446 744 073 709 551 615 units is no node's.
    let (mut mantissa, mut digits, mut fraction_digits, mut point) = (0u64, 0usize, 0i32, false);
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
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
        return Some(0);
    }
    let exponent = decimal + scale_exponent - fraction_digits;
    let value = mantissa.checked_mul(1024u64.checked_pow(binary)?)?;
    if exponent >= 0 {
        value.checked_mul(10u64.checked_pow(exponent.unsigned_abs())?)
    } else {
        match 10u64.checked_pow(exponent.unsigned_abs()) {
            Some(d) => Some(value.div_ceil(d)),
            // Smaller than any unit: a non-zero amount rounds up to one.
            None => Some(1),
        }
    }
}

/// How the scheduler counts `amount` of `resource`: CPU in millicores, the rest in units.
pub fn scheduler_units(resource: &str, amount: &str) -> Option<u64> {
    scaled(amount, if resource == "cpu" { 3 } else { 0 })
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
        for bad in ["", "m", "Gi", "1.2.3", "1Qi", "1e", "1ee3", "-1", "-1Gi", "1 Gi", "1e99999", "17Ei", "0x10", "∞"]
        {
            assert_eq!(scheduler_units("memory", bad), None, "{bad:?}");
        }
        assert_eq!(scheduler_units("cpu", "1e-40"), Some(1), "any non-zero amount is at least one unit");
        assert_eq!(scheduler_units("cpu", "0.000"), Some(0));
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
