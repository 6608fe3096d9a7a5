//! Retrieval equivalence: documents whose canonical texts have the same 128-bit hash. The same
//! grouping by a 128-bit key lets every other method compare documents with identical features
//! only once.

/// Documents split by a 128-bit key: the first document of each key stands for the others.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classes {
    /// The first document of every distinct key, ascending.
    pub reps: Vec<u32>,
    /// (first document, later document) for every later document with the same key, sorted.
    pub copies: Vec<(u32, u32)>,
}

/// Splits the documents that have a key (`None` = set aside) into classes of equal keys. Sorting
/// keys is O(n log n); no pair of documents is compared.
///
/// # Example
/// ```
/// use pocketdex_methods::exact::classes;
/// let c = classes(&[Some(7), Some(9), None, Some(7), Some(7)]);
/// assert_eq!(c.reps, [0, 1]);
/// assert_eq!(c.copies, [(0, 3), (0, 4)]);
/// ```
pub fn classes(keys: &[Option<u128>]) -> Classes {
    let mut order: Vec<(u128, u32)> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| k.map(|k| (k, i as u32)))
        .collect();
    order.sort_unstable();
    let mut reps = Vec::new();
    let mut copies = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let first = order[i].1;
        reps.push(first);
        let mut j = i + 1;
        while j < order.len() && order[j].0 == order[i].0 {
            copies.push((first, order[j].1));
            j += 1;
        }
        i = j;
    }
    reps.sort_unstable();
    copies.sort_unstable();
    Classes { reps, copies }
}
