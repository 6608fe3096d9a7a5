//! `pocketdex keygen` and `pocketdex sign`, and `--public-key`: the trusted key that `query`,
//! `info` and `verify` check an index's signature against before they answer.

use anyhow::Context;
use pocketdex::signing::{self, PublicKey, SecretKey};
use pocketdex::{Index, IndexSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Make a key pair for signing indexes
///
/// NAME.key is the secret key (readable by you only); NAME.pub the public one (give it to
/// whoever checks your indexes).
///
/// Example:
///   pocketdex keygen -o publisher
///   pocketdex sign wiki.pdx --key publisher.key
///   pocketdex query wiki.pdx --public-key publisher.pub samples/query/edited.txt
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct KeygenArgs {
    /// Write NAME.key and NAME.pub (NAME may end in .key or .pub, left out; not a directory).
    #[arg(
        short,
        long,
        visible_alias = "output",
        value_name = "NAME",
        default_value = "pocketdex"
    )]
    out: PathBuf,
    /// Replace key files that exist.
    #[arg(long)]
    force: bool,
}

/// Sign an index file in place with a secret key (`pocketdex keygen`).
///
/// A signature block is appended (one it had is replaced); the file is fully verified first.
///
/// Anyone holding the public key can then refuse any file the key's owner did not sign: `query`,
/// `info` and `verify` take `--public-key NAME.pub`. The signature covers every byte a query
/// reads, through the block tree (index-format.md §7.2), so checking it costs what opening the
/// file costs. Index sets are not signed: export one file with `pocketdex merge SET -o FILE.pdx`
/// and sign that.
#[derive(clap::Args, Debug)]
pub struct SignArgs {
    /// The index file.
    #[arg(value_name = "INDEX")]
    index: PathBuf,
    /// The secret key file (NAME.key from `pocketdex keygen`).
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
}

/// The trusted key option of the reading commands.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Trust {
    /// Refuse any index not signed by this key: a public key file (NAME.pub from `pocketdex
    /// keygen`) or its 64 hex digits. Index sets are unsigned, so they are refused too.
    #[arg(long, value_name = "KEY")]
    public_key: Option<String>,
}

impl Trust {
    /// The trusted key, if one was given.
    pub fn key(&self) -> anyhow::Result<Option<PublicKey>> {
        let Some(arg) = &self.public_key else {
            return Ok(None);
        };
        let text = if Path::new(arg).exists() {
            std::fs::read_to_string(arg).with_context(|| format!("reading public key {arg}"))?
        } else if !PublicKey::looks_like_text(arg) {
            // Not a key's text, so meant as a file: say it is missing, not malformed.
            anyhow::bail!(
                "--public-key {arg}: no such file; give the signer's public key file (NAME.pub from `pocketdex keygen`) or its text"
            );
        } else {
            arg.clone()
        };
        PublicKey::parse(&text)
            .map(Some)
            .with_context(|| format!("--public-key {arg}: neither a key file nor a key"))
    }

    /// Checks one index file against the trusted key, if one was given.
    pub fn check_one<D: AsRef<[u8]>>(&self, index: &Index<D>, path: &Path) -> anyhow::Result<()> {
        match self.key()? {
            Some(key) => index
                .check_signature(&key)
                .with_context(|| path.display().to_string()),
            None => Ok(()),
        }
    }

    /// Checks every file of `set` against the trusted key, if one was given.
    pub fn check<D: AsRef<[u8]>>(
        &self,
        set: &IndexSet<D>,
        paths: &[PathBuf],
    ) -> anyhow::Result<()> {
        let Some(key) = self.key()? else {
            return Ok(());
        };
        if let Some(dir) = paths.iter().find(|p| p.is_dir()) {
            anyhow::bail!(
                "{}: index sets are not signed, so --public-key refuses them; export one file with `pocketdex merge {} -o FILE.pdx`, sign it, and query that",
                dir.display(),
                dir.display()
            );
        }
        for part in set.parts() {
            part.index
                .check_signature(&key)
                .with_context(|| part.file.clone())?;
        }
        Ok(())
    }
}

pub fn keygen(args: KeygenArgs) -> anyhow::Result<ExitCode> {
    // `-o keys/` (or a directory) would make the hidden files `keys/.key` and `keys/.pub`.
    if args.out.is_dir()
        || args.out.file_name().is_none()
        || args.out.as_os_str().as_encoded_bytes().ends_with(b"/")
    {
        anyhow::bail!(
            "-o takes a NAME for the two files, NAME.key and NAME.pub, not a directory: e.g. -o {}",
            args.out.join("archive").display()
        );
    }
    // `-o archive.key` means the key pair `archive`, not `archive.key.key`.
    let out = match args.out.extension() {
        Some(e) if e == "key" || e == "pub" => args.out.with_extension(""),
        _ => args.out.clone(),
    };
    let with = |ext: &str| {
        let mut p = out.clone().into_os_string();
        p.push(ext);
        PathBuf::from(p)
    };
    let (secret, public) = (with(".key"), with(".pub"));
    for p in [&secret, &public] {
        if p.is_dir() {
            anyhow::bail!(
                "{} is a directory; choose another name for the key files with -o",
                p.display()
            );
        }
        if p.exists() && !args.force {
            anyhow::bail!(
                "{} exists; choose another name with -o, or replace it with --force",
                p.display()
            );
        }
    }
    // Both files are written as every output is (a new file renamed into place: a symbolic
    // link or device is refused, never written through); the secret is 0600 from its first
    // byte, whatever the file it replaces allowed.
    let key = SecretKey::generate()?;
    for p in [&secret, &public] {
        pocketdex::atomic::check_output(p)?;
    }
    // The secret first: a public key without its secret is useless, and one left by a failed
    // run would make the next keygen ask for --force. A new secret whose public key cannot be
    // written goes again.
    let had_secret = secret.exists();
    pocketdex::atomic::write_private_file(&secret, key.to_text().as_bytes())
        .with_context(|| format!("writing {}", secret.display()))?;
    pocketdex::atomic::write_file(&public, |w| {
        w.write_all(key.public().to_text().as_bytes())
            .map_err(|e| pocketdex::Error::io(&public, e))
    })
    .inspect_err(|_| {
        if !had_secret {
            let _ = std::fs::remove_file(&secret);
        }
    })
    .with_context(|| format!("writing {}", public.display()))?;
    eprintln!(
        "wrote {} (secret: keep it to yourself) and {} (public key {}: give it to readers)",
        secret.display(),
        public.display(),
        key.public().short()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn sign(args: SignArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.key)
        .with_context(|| format!("reading secret key {}", args.key.display()))?;
    let key = SecretKey::parse(&text).with_context(|| args.key.display().to_string())?;
    if pocketdex::is_set(&args.index) {
        anyhow::bail!(
            "{}: index sets are not signed; export one file with `pocketdex merge {} -o FILE.pdx` and sign that",
            args.index.display(),
            args.index.display()
        );
    }
    if args.index.is_dir() {
        anyhow::bail!(
            "{} is a directory, not an index file; sign a file written by `pocketdex build` or `merge -o`",
            args.index.display()
        );
    }
    // Signing replaces the file: a directory it cannot write in is said so before any work.
    pocketdex::atomic::check_output(&args.index)?;
    let public =
        signing::sign_file(&args.index, &key).with_context(|| args.index.display().to_string())?;
    eprintln!(
        "signed {} with key {}; readers check it with --public-key",
        args.index.display(),
        public.short()
    );
    Ok(ExitCode::SUCCESS)
}
