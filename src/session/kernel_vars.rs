//! A session's kernel variables on disk: `.hello-tui/sessions/<id>.vars/`,
//! one file per variable (`NAME.pickle`, or `NAME.py` for a function kept
//! as its source). The workbench writes them for the sandboxed kernel,
//! which cannot write `.hello-tui` itself, and never reads them as more
//! than bytes: only the kernel unpickles (`kernel::caps::vars`).
//!
//! Written as the session file is: beneath the workspace, no link on the
//! way (a repository that ships the folder as a link steers nothing), each
//! file replaced atomically. Each file is signed with a key of the user's
//! own, kept outside every workspace ([`key_path`]): a repository can ship
//! a `.vars` folder, but what it ships is not loaded, so nothing a
//! workspace provides runs in the kernel at `--continue`.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ring::hmac;
use rustix::fs::OFlags;

use super::id::is_valid_id;
use crate::kernel::caps::{WriteError, open_in, own_folder};

/// Where one session's variables are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarsPlace {
    pub workspace: PathBuf,
    pub session: String,
}

impl VarsPlace {
    fn relative(&self) -> std::io::Result<PathBuf> {
        if !is_valid_id(&self.session) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("not a session id: {}", self.session),
            ));
        }
        Ok(Path::new(".hello-tui")
            .join("sessions")
            .join(format!("{}.vars", self.session)))
    }

    fn folder(&self, create: bool) -> std::io::Result<OwnedFd> {
        own_folder(&self.workspace, &self.relative()?, create).map_err(io)
    }

    /// What signs `file`'s `bytes` in this session.
    fn tag(&self, key: &hmac::Key, file: &str, bytes: &[u8]) -> hmac::Tag {
        let mut context = hmac::Context::with_key(key);
        for part in [
            self.session.as_bytes(),
            &b"\0"[..],
            file.as_bytes(),
            &b"\0"[..],
            bytes,
        ] {
            context.update(part);
        }
        context.sign()
    }

    /// Replaces `file` with `bytes`, signed (written aside, then renamed
    /// over it).
    pub fn write(&self, file: &str, bytes: &[u8]) -> std::io::Result<()> {
        let key = key()?;
        let dir = self.folder(true)?;
        let aside = format!(".{file}.tmp");
        let fd = open_in(
            &dir,
            &aside,
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
        )
        .map_err(io)?;
        let mut out = std::fs::File::from(fd);
        out.write_all(self.tag(key, file, bytes).as_ref())?;
        out.write_all(bytes)?;
        out.sync_data()?;
        rustix::fs::renameat(&dir, &aside, &dir, file)?;
        Ok(())
    }

    /// Removes `file`; one that is not there is no error.
    pub fn remove(&self, file: &str) -> std::io::Result<()> {
        let dir = match self.folder(false) {
            Ok(dir) => dir,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        match rustix::fs::unlinkat(&dir, file, rustix::fs::AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Every file kept (name and bytes), in name order, and the names of
    /// those whose signature is not this user's (not loaded); nothing when
    /// the folder is not there.
    pub fn read_all(&self) -> std::io::Result<Kept> {
        let dir = match self.folder(false) {
            Ok(dir) => dir,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Kept::default());
            }
            Err(error) => return Err(error),
        };
        let key = key()?;
        let listing = open_in(&dir, ".", OFlags::RDONLY | OFlags::DIRECTORY).map_err(io)?;
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&listing)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if !name.starts_with('.') {
                names.push(name);
            }
        }
        names.sort();
        let mut kept = Kept::default();
        for name in names {
            let fd = open_in(&dir, &name, OFlags::RDONLY).map_err(io)?;
            let mut bytes = Vec::new();
            std::fs::File::from(fd).read_to_end(&mut bytes)?;
            let tag_len = hmac::HMAC_SHA256.digest_algorithm().output_len();
            if bytes.len() < tag_len {
                kept.refused.push(name);
                continue;
            }
            let payload = bytes.split_off(tag_len);
            let mut context = Vec::new();
            for part in [
                self.session.as_bytes(),
                &b"\0"[..],
                name.as_bytes(),
                &b"\0"[..],
                &payload,
            ] {
                context.extend_from_slice(part);
            }
            match hmac::verify(key, &context, &bytes) {
                Ok(()) => kept.files.push((name, payload)),
                Err(_) => kept.refused.push(name),
            }
        }
        Ok(kept)
    }
}

/// What a session's folder holds.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// Signed by this user's workbench: name and bytes.
    pub files: Vec<(String, Vec<u8>)>,
    /// Not signed by it (shipped with a repository, or edited): not loaded.
    pub refused: Vec<String>,
}

/// Where the signing key lives: `HELLO_TUI_VARS_KEY_FILE`, else the
/// user's data folder (never a workspace).
pub fn key_path() -> Option<PathBuf> {
    std::env::var_os("HELLO_TUI_VARS_KEY_FILE")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            directories::ProjectDirs::from("", "", "hello-tui")
                .map(|dirs| dirs.data_local_dir().join("kept-variables.key"))
        })
}

/// The user's signing key: read, or made (32 random bytes, mode 0600) the
/// first time. Two workbenches making it at once agree: the file is linked
/// into place only if none is there, and the one that lost reads it.
fn key() -> std::io::Result<&'static hmac::Key> {
    static KEY: OnceLock<Result<hmac::Key, String>> = OnceLock::new();
    KEY.get_or_init(|| load_or_make_key().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| std::io::Error::other(format!("no key to sign kept variables: {e}")))
}

fn load_or_make_key() -> std::io::Result<hmac::Key> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = key_path()
        .ok_or_else(|| std::io::Error::other("no data folder (set HELLO_TUI_VARS_KEY_FILE)"))?;
    if let Ok(bytes) = std::fs::read(&path)
        && bytes.len() == 32
    {
        return Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes));
    }
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let mut secret = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut secret)
        .map_err(|_| std::io::Error::other("no randomness for the key"))?;
    let aside = path.with_extension(format!("tmp.{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&aside)?;
    file.write_all(&secret)?;
    file.sync_all()?;
    let linked = std::fs::hard_link(&aside, &path);
    let _ = std::fs::remove_file(&aside);
    match linked {
        Ok(()) => Ok(hmac::Key::new(hmac::HMAC_SHA256, &secret)),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            let bytes = std::fs::read(&path)?;
            if bytes.len() != 32 {
                return Err(std::io::Error::other(format!(
                    "{} is not a key (32 bytes)",
                    path.display()
                )));
            }
            Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes))
        }
        Err(error) => Err(error),
    }
}

fn io(error: WriteError) -> std::io::Error {
    match error {
        WriteError::Io(error) => error,
        other => std::io::Error::other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(dir: &Path) -> VarsPlace {
        VarsPlace {
            workspace: dir.to_path_buf(),
            session: crate::session::new_id(time::OffsetDateTime::UNIX_EPOCH, 7),
        }
    }

    #[test]
    fn files_are_written_replaced_listed_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let place = place(dir.path());
        assert_eq!(place.read_all().unwrap(), Kept::default(), "nothing yet");
        place.write("b.pickle", b"one").unwrap();
        place.write("a.py", b"def a(): pass\n").unwrap();
        place.write("b.pickle", b"two").unwrap();
        assert_eq!(
            place.read_all().unwrap().files,
            vec![
                ("a.py".to_owned(), b"def a(): pass\n".to_vec()),
                ("b.pickle".to_owned(), b"two".to_vec())
            ]
        );
        place.remove("b.pickle").unwrap();
        place.remove("never.pickle").unwrap();
        assert_eq!(place.read_all().unwrap().files.len(), 1);
    }

    /// A repository can ship a session's `.vars` folder; what it ships (or
    /// a file edited, or one copied from another session) is not loaded.
    #[test]
    fn only_files_this_user_signed_for_this_session_are_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let place = place(dir.path());
        place.write("x.pickle", b"mine").unwrap();
        let folder = dir
            .path()
            .join(".hello-tui/sessions")
            .join(format!("{}.vars", place.session));
        std::fs::write(folder.join("shipped.pickle"), [0u8; 40]).unwrap();
        let mut edited = std::fs::read(folder.join("x.pickle")).unwrap();
        std::fs::write(folder.join("y.pickle"), &edited).unwrap();
        edited.push(b'!');
        std::fs::write(folder.join("z.pickle"), &edited).unwrap();
        std::fs::write(folder.join("short.pickle"), b"x").unwrap();
        let kept = place.read_all().unwrap();
        assert_eq!(kept.files, vec![("x.pickle".to_owned(), b"mine".to_vec())]);
        assert_eq!(
            kept.refused,
            ["shipped.pickle", "short.pickle", "y.pickle", "z.pickle"]
        );
        let other = VarsPlace {
            session: crate::session::new_id(time::OffsetDateTime::UNIX_EPOCH, 8),
            ..place.clone()
        };
        let copied = other.relative().unwrap();
        std::fs::create_dir_all(dir.path().join(&copied)).unwrap();
        std::fs::copy(
            folder.join("x.pickle"),
            dir.path().join(copied).join("x.pickle"),
        )
        .unwrap();
        assert_eq!(other.read_all().unwrap().refused, ["x.pickle"]);
    }

    #[test]
    fn a_linked_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".hello-tui")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(".hello-tui/sessions"))
            .unwrap();
        let place = place(dir.path());
        assert!(place.write("x.pickle", b"x").is_err());
        assert!(place.read_all().is_err());
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_session_id_that_is_a_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let place = VarsPlace {
            workspace: dir.path().to_path_buf(),
            session: "../../etc".into(),
        };
        assert!(place.write("x.pickle", b"x").is_err());
    }
}
