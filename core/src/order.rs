//! One stable sort for the lists the rules order by a comparison of their own.
//!
//! `slice::sort_by` and `sort_unstable_by_key` compile a whole sort (4 to 6 KB of wasm) for
//! each element type and comparison they are called with. [`sort_by`] sorts the items'
//! positions instead, through one comparison reached by a pointer, so a single compiled sort
//! serves every type: only moving the items into their order is compiled per type. Lists of
//! `&str` keep `sort_unstable`: it is compiled once for them (and shared with
//! `select_nth_unstable` in [`crate::field::truncated_sorted_list`]).

use std::cmp::Ordering;

/// Sorts `items` by `cmp`, as `slice::sort_by` does: stable, items that compare equal keep
/// their order.
pub fn sort_by<T>(items: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let order = sorted_positions(items.len(), &mut |a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(order.into_iter().filter_map(|at| slots[at].take()));
}

/// The positions `0..len` ordered by `cmp`, stably.
fn sorted_positions(len: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_the_stable_slice_sort_does() {
        // Pseudo-random lists (a linear congruential sequence) with many equal keys, so that
        // stability shows: the second field records the original order.
        let mut state = 12345u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        for len in [0, 1, 2, 3, 7, 20, 21, 64, 333, 2000] {
            for keys in [1, 3, 50, u32::MAX] {
                let items: Vec<(u32, usize)> = (0..len).map(|i| (next() % keys, i)).collect();
                let mut want = items.clone();
                want.sort_by_key(|item| item.0);
                let mut got = items.clone();
                sort_by(&mut got, |a, b| a.0.cmp(&b.0));
                assert_eq!(got, want, "{len} items, {keys} keys");
                let mut reversed = items;
                sort_by(&mut reversed, |a, b| b.0.cmp(&a.0));
                want.sort_by_key(|item| std::cmp::Reverse(item.0));
                assert_eq!(reversed, want, "{len} items, {keys} keys, descending");
            }
        }
    }

    #[test]
    fn moves_owned_items() {
        let mut items: Vec<String> = ["b", "c", "a", "b"].map(String::from).to_vec();
        sort_by(&mut items, |a, b| a.cmp(b));
        assert_eq!(items, ["a", "b", "b", "c"]);
    }
}
