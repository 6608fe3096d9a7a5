//! Signed indexes: `keygen`, `sign` and `--public-key` as a user runs them, and forgeries the
//! signature must refuse (a changed block with the whole tree and every checksum recomputed).

use crate::common;

use common::{pocketdex, root, stdout};
use pocketdex::signing::{self, PublicKey, SecretKey};
use pocketdex::{Index, QueryOptions};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A signed copy of the sample index and a key pair, in a temporary directory.
fn signed() -> (tempfile::TempDir, std::path::PathBuf, SecretKey) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wiki.pdx");
    let o = pocketdex(&["build", "samples/wiki-en", "-o", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let key = SecretKey::generate().unwrap();
    signing::sign_file(&file, &key).unwrap();
    (dir, file, key)
}

#[test]
fn a_signed_index_answers_as_before_and_only_to_its_key() {
    let (_dir, file, key) = signed();
    let bytes = std::fs::read(&file).unwrap();
    let index = Index::open(&bytes[..]).unwrap();
    index.verify().unwrap();
    index.check_signature(&key.public()).unwrap();
    assert_eq!(index.signature().unwrap().public_key, key.public());
    let other = SecretKey::generate().unwrap().public();
    let e = index.check_signature(&other).unwrap_err().to_string();
    assert!(e.contains("not by the trusted key"), "{e}");
    // The signature block changes no answer.
    let unsigned = &bytes[..bytes.len() - signing::SIGNATURE_LEN];
    let plain = Index::open(unsigned).unwrap();
    let text = std::fs::read_to_string(root().join("samples/query/edited.txt")).unwrap();
    let (a, b) = (
        index.query(&text, &QueryOptions::default()).unwrap(),
        plain.query(&text, &QueryOptions::default()).unwrap(),
    );
    assert_eq!(a.hits, b.hits);
    assert!(plain.check_signature(&key.public()).is_err());
}

/// A forger who changes a sketch and recomputes every hash and checksum (the block tree too)
/// still cannot make the signature match; one who changes a block alone is caught when a query
/// reads it.
#[test]
fn forgeries_are_refused() {
    let (_dir, file, key) = signed();
    let bytes = std::fs::read(&file).unwrap();
    let (body, block) = bytes.split_at(bytes.len() - signing::SIGNATURE_LEN);
    let sketches = Index::open(body)
        .unwrap()
        .sections()
        .into_iter()
        .find(|s| s.name == "SKETCHES")
        .unwrap();
    let mut forged = body.to_vec();
    forged[sketches.offset as usize + 100] ^= 0xff;
    pocketdex::reseal(&mut forged);
    Index::open(&forged[..]).unwrap().verify().unwrap();
    forged.extend_from_slice(block);
    let index = Index::open(&forged[..]).unwrap();
    // Every checksum is right, but the block does not sign these bytes: `verify` says so
    // without a trusted key (a forger must sign with a key of their own, which the trusted
    // key then refuses).
    let e = index.verify().unwrap_err().to_string();
    assert!(e.contains("does not verify with its own key"), "{e}");
    let e = index
        .check_signature(&key.public())
        .unwrap_err()
        .to_string();
    assert!(e.contains("changed after it was signed"), "{e}");

    let mut damaged = bytes.clone();
    damaged[sketches.offset as usize + 100] ^= 0xff;
    let index = Index::open(&damaged[..]).unwrap();
    index.check_signature(&key.public()).unwrap();
    let all = QueryOptions {
        threshold: 0.0,
        top: usize::MAX,
        ..QueryOptions::default()
    };
    let text = std::fs::read_to_string(root().join("samples/wiki-en/Jupiter.txt")).unwrap();
    // The sketches' first block holds the damage: any query that scores a document in it fails.
    let e = (0..20)
        .map(|i| index.sketch(i))
        .find_map(Result::err)
        .expect("the damaged block is read");
    assert!(e.to_string().contains("SKETCHES block 0"), "{e}");
    let _ = index.query(&text, &all);
}

#[test]
fn keygen_sign_and_public_key_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (idx, name) = (d("wiki.pdx"), d("archive"));
    assert!(pocketdex(&["build", "samples/wiki-en", "-o", &idx])
        .status
        .success());
    let o = pocketdex(&["keygen", "-o", &name]);
    assert!(o.status.success(), "{}", stderr(&o));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d("archive.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the secret key is private");
    }
    // keygen does not overwrite a key.
    let o = pocketdex(&["keygen", "-o", &name]);
    assert!(!o.status.success() && stderr(&o).contains("--force"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &str| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // --force over a key someone made readable: the new secret is private again.
        let again = d("again");
        assert!(pocketdex(&["keygen", "-o", &again]).status.success());
        let k = d("again.key");
        std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o644)).unwrap();
        let o = pocketdex(&["keygen", "-o", &again, "--force"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(mode(&k), 0o600);
        // A link in the key's place is refused, never written through.
        std::fs::write(d("victim.txt"), "mine").unwrap();
        std::os::unix::fs::symlink(d("victim.txt"), d("link.key")).unwrap();
        let o = pocketdex(&["keygen", "-o", &d("link"), "--force"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(d("victim.txt")).unwrap(), "mine");
        // sign keeps the index's permissions.
        let private = d("private.pdx");
        std::fs::copy(&idx, &private).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        let o = pocketdex(&["sign", &private, "--key", &k]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(mode(&private), 0o600);
    }
    let public = d("archive.pub");
    let q = ["samples/query/edited.txt"];
    // Unsigned: refused with a key, answered without one.
    let o = pocketdex(&[&["query", &idx, "--public-key", &public][..], &q[..]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not signed"), "{}", stderr(&o));
    let o = pocketdex(&["sign", &idx, "--key", &d("archive.key")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = pocketdex(&[&["query", &idx, "--public-key", &public][..], &q[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Jupiter.txt"));
    // A key file saved with a byte order mark (as Notepad saves one) is the same key.
    let bom = d("bom.pub");
    std::fs::write(
        &bom,
        format!("\u{feff}{}", std::fs::read_to_string(&public).unwrap()),
    )
    .unwrap();
    let o = pocketdex(&["verify", &idx, "--public-key", &bom]);
    assert!(o.status.success(), "{}", stderr(&o));
    // -o names the pair: a directory is refused (it would make hidden `.key` and `.pub`), and
    // a name ending in .key or .pub is the pair's name without it.
    let o = pocketdex(&["keygen", "-o", &format!("{}/", dir.path().display())]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));
    assert!(!dir.path().join(".key").exists());
    let o = pocketdex(&["keygen", "-o", &d("third.key")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::path::Path::new(&d("third.key")).exists()
            && std::path::Path::new(&d("third.pub")).exists()
    );
    assert!(!std::path::Path::new(&d("third.key.key")).exists());
    // The key's hex alone works too; verify and info take it.
    let hex = std::fs::read_to_string(&public).unwrap();
    let hex = hex.split_whitespace().last().unwrap();
    for cmd in ["verify", "info"] {
        let o = pocketdex(&[cmd, &idx, "--public-key", hex]);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
    }
    // Another key is refused, and so is a changed file.
    let o = pocketdex(&["keygen", "-o", &d("other")]);
    assert!(o.status.success());
    let o = pocketdex(&["verify", &idx, "--public-key", &d("other.pub")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not by the trusted key"),
        "{}",
        stderr(&o)
    );
    let mut bytes = std::fs::read(&idx).unwrap();
    let n = bytes.len();
    bytes[n - signing::SIGNATURE_LEN - 40] ^= 1;
    std::fs::write(&idx, &bytes).unwrap();
    let o = pocketdex(&["verify", &idx, "--public-key", &public]);
    assert_eq!(o.status.code(), Some(2));
    // A secret key is not a public key.
    let o = pocketdex(&["info", &idx, "--public-key", &d("archive.key")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        PublicKey::parse(&std::fs::read_to_string(d("archive.key")).unwrap()).is_err(),
        "a secret key parsed as a public one"
    );
}

/// `verify` without a key checks the signature block against the key it carries, so a block
/// damaged in a copy is found by the check one runs after copying; `info` says whether the
/// signature was checked; a signed file cut short is "truncated"; a --public-key file that is
/// not there is said to be missing.
#[test]
fn verify_checks_a_signature_against_its_own_key() {
    let (dir, file, key) = signed();
    let run = |args: &[&str]| pocketdex(args);
    let f = file.to_str().unwrap();
    assert!(run(&["verify", f]).status.success());
    let bytes = std::fs::read(&file).unwrap();
    let copy = dir.path().join("copy.pdx");
    let c = copy.to_str().unwrap();
    let public = dir.path().join("me.pub");
    std::fs::write(&public, key.public().to_text()).unwrap();
    let p = public.to_str().unwrap();
    // A bit of the embedded key, then of the signature: neither verifies (checked against the
    // trusted key too, the damage is said, not another signer).
    // The block: magic 8, algorithm 4, reserved 4, signed length 8, key 32, signature 64, end 8.
    for in_block in [30, 80] {
        let mut b = bytes.clone();
        let at = b.len() - signing::SIGNATURE_LEN + in_block;
        b[at] ^= 1;
        std::fs::write(&copy, &b).unwrap();
        for o in [run(&["verify", c]), run(&["verify", c, "--public-key", p])] {
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            // A flipped bit of the (random) key may also make no valid key at all.
            let e = stderr(&o);
            assert!(
                e.contains("does not verify with its own key")
                    || e.contains("public key is not valid")
                    || e.contains("the file was changed after it was signed"),
                "{e}"
            );
            assert!(
                !e.contains("signed by key"),
                "damage, not another signer: {e}"
            );
        }
    }
    // A trusted key that differs from the signer's past its first 8 bytes (mistyped): both
    // are printed whole, so that they differ in the message too.
    let mine = key.public().to_text();
    let hex = mine.split_whitespace().last().unwrap();
    let other = (0..)
        .map(|_| SecretKey::generate().unwrap().public().to_text())
        .find_map(|t| {
            let spliced = format!(
                "{}{}",
                &hex[..16],
                &t.split_whitespace().last().unwrap()[16..]
            );
            PublicKey::parse(&spliced).ok().map(|_| spliced)
        })
        .unwrap();
    let o = run(&["verify", f, "--public-key", &other]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "signed by key {hex}, not by the trusted key {other}"
        )),
        "{}",
        stderr(&o)
    );
    // Zero padding after a signed file (a copy to media): how much, and where to cut.
    let mut padded = bytes.clone();
    padded.extend([0u8; 2048]);
    std::fs::write(&copy, &padded).unwrap();
    let o = run(&["verify", c]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let cut = format!("2048 bytes follow the {} of a signed index", bytes.len());
    assert!(stderr(&o).contains(&cut), "{}", stderr(&o));
    std::fs::write(&copy, &bytes[..bytes.len() - 1]).unwrap();
    let o = run(&["verify", c]);
    assert!(
        stderr(&o).contains("truncated: its signature block has 127 of its 128 bytes"),
        "{}",
        stderr(&o)
    );
    let info = |args: &[&str]| stdout(&run(args));
    assert!(info(&["info", f]).contains("(not checked: --public-key KEY checks it)"));
    assert!(info(&["info", f, "--public-key", p]).contains("(checked: signed by the trusted key)"));
    let o = run(&["verify", f, "--public-key", "no-such.pub"]);
    assert!(
        stderr(&o).contains("no-such.pub: no such file"),
        "{}",
        stderr(&o)
    );
}
