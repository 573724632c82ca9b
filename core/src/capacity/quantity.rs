//! Kubernetes resource quantities (`500m`, `64Gi`, `1e3`, `8`), read as the scheduler counts
//! them: CPU in millicores and everything else in whole units, each rounded up
//! (`Quantity.MilliValue()` and `Quantity.Value()` in apimachinery).

/// The suffixes of apimachinery's quantity grammar: `Ki` .. `Ei` (powers of 1024), `n` .. `E`
/// (powers of 10), and `e<n>` / `E<n>` exponents.
fn suffix(s: &str) -> Option<(i32, u32)> {
    // (decimal exponent, binary exponent in units of 1024)
    Some(match s {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 1),
        "Mi" => (0, 2),
        "Gi" => (0, 3),
        "Ti" => (0, 4),
        "Pi" => (0, 5),
        "Ei" => (0, 6),
        exponent => {
            let digits = exponent.strip_prefix(['e', 'E'])?;
            let (negative, digits) = match digits.as_bytes().first()? {
                b'-' => (true, &digits[1..]),
                b'+' => (false, &digits[1..]),
                _ => (false, digits),
            };
            if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let n: i32 = digits.parse().ok()?;
            (if negative { -n } else { n }, 0)
        }
    })
}

/// `text` as an amount `scale` times finer than its unit (`scale_exponent` 3: millis),
/// rounded up; `None` when it is not a quantity, is negative, or does not fit in a `u64`
/// (no node has that much of anything, and no claim is made on what cannot be read).
fn scaled(text: &str, scale_exponent: i32) -> Option<u64> {
    let text = text.trim();
    let text = text.strip_prefix('+').unwrap_or(text);
    if let Some(rest) = text.strip_prefix('-') {
        // `-0` is zero; any other negative amount is no request a node can meet.
        return scaled(rest, scale_exponent).filter(|v| *v == 0);
    }
    let number_end = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, rest) = text.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return None;
    }
    let (decimal, binary) = suffix(rest)?;
    // The significant digits as one integer, leading zeros dropped; more digits than an
    // u128 holds are no real amount.
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 36 {
        return None;
    }
    let mantissa: u128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    if mantissa == 0 {
        return Some(0);
    }
    let exponent = decimal + scale_exponent - i32::try_from(fraction.len()).ok()?;
    let mut value = mantissa.checked_mul(1024u128.checked_pow(binary)?)?;
    if exponent >= 0 {
        value = value.checked_mul(10u128.checked_pow(u32::try_from(exponent).ok()?)?)?;
    } else {
        let divisor = 10u128.checked_pow(u32::try_from(-exponent).ok()?);
        value = match divisor {
            Some(d) => value.div_ceil(d),
            // Smaller than any unit: a non-zero amount rounds up to one.
            None => 1,
        };
    }
    u64::try_from(value).ok()
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
