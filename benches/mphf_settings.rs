//! What ph's group seed size and relative level size do to the index's MPHF (FMPHGO, 16-bit
//! groups, pocketdex's `MphfHasher`; `index-format.md` §9 pins 2-bit seeds and 150% since
//! version 9, 4-bit seeds and 100% before): build time on every core, bits per code, and
//! lookups of present and absent codes, over random 64-bit codes (an index's codes are hashes),
//! each setting built twice, alternating.
//!
//! ```sh
//! cargo bench --bench mphf_settings                    # 14,435,831 codes: a 2M-document index's
//! cargo bench --bench mphf_settings -- --keys 1000000
//! cargo bench --bench mphf_settings -- --test          # 20,000 codes, once: that it runs
//! ```

use ph::fmph::{GOBuildConf, GOConf, GOFunction, TwoToPowerBitsStatic};
use pocketdex::hash::{h64, MphfHasher};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let test = args.iter().any(|a| a == "--test");
    let keys_arg = args
        .iter()
        .position(|a| a == "--keys")
        .map(|i| args[i + 1].parse::<u64>().expect("--keys: a number"));
    let n = if test {
        20_000
    } else {
        keys_arg.unwrap_or(14_435_831)
    };
    let mut keys: Vec<u64> = (0..n).map(|i| h64(&i.to_le_bytes(), 0x6d70_6866)).collect();
    keys.sort_unstable();
    keys.dedup();
    let absent: Vec<u64> = (0..1_000_000u64.min(n))
        .map(|i| h64(&i.to_le_bytes(), 0x6162_7365))
        .collect();
    let rounds = if test { 1 } else { 2 };
    println!(
        "| group seed bits | relative level size | build | bits per code | lookup of a present / an absent code |"
    );
    println!("|---|---|---|---|---|");
    for _ in 0..rounds {
        for lsize in [100u16, 150, 200] {
            measure(&keys, &absent, TwoToPowerBitsStatic::<2>, lsize);
            measure(&keys, &absent, TwoToPowerBitsStatic::<1>, lsize);
            measure(&keys, &absent, TwoToPowerBitsStatic::<0>, lsize);
        }
    }
}

/// One MPHF over `keys` with `seeds` bits per group seed and level size `lsize`: its row.
fn measure<SS: ph::seeds::SeedSize>(keys: &[u64], absent: &[u64], seeds: SS, lsize: u16) {
    let conf = GOConf::hash_bps_bpg(MphfHasher, seeds, TwoToPowerBitsStatic::<4>);
    let t = Instant::now();
    let f: GOFunction<TwoToPowerBitsStatic<4>, SS, MphfHasher> =
        GOFunction::from_slice_with_conf(keys, GOBuildConf::with_lsize_mt(conf, lsize, true));
    let build = t.elapsed().as_secs_f64();
    let bits = f.write_bytes() as f64 * 8.0 / keys.len() as f64;
    // Every 14th code: about a million lookups at full size.
    let present: Vec<u64> = keys.iter().copied().step_by(14).collect();
    let t = Instant::now();
    for k in &present {
        black_box(f.get(k));
    }
    let present_ns = t.elapsed().as_secs_f64() * 1e9 / present.len() as f64;
    let t = Instant::now();
    for k in absent {
        black_box(f.get(k));
    }
    let absent_ns = t.elapsed().as_secs_f64() * 1e9 / absent.len() as f64;
    println!(
        "| {} | {lsize}% | {build:.2} s | {bits:.3} | {present_ns:.0} / {absent_ns:.0} ns |",
        Into::<u8>::into(seeds)
    );
}
