//! Secrets at rest: AES-256-GCM under a master key kept in a file of its own (64 hex digits),
//! never in the database. Each secret has a fresh random nonce, and its access key id is the
//! associated data, so a sealed secret copied onto another key's row does not open.

use std::path::Path;

use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};

use crate::AuthorityError;

/// The master key.
pub struct MasterKey {
    key: LessSafeKey,
}

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(<redacted>)")
    }
}

impl MasterKey {
    /// Reads a master key file.
    pub fn load(path: &Path) -> Result<Self, AuthorityError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            AuthorityError::Settings(format!(
                "cannot read the master key file {}: {e} (create one with `slipstream authority master-key {}`)",
                path.display(),
                path.display()
            ))
        })?;
        let bytes: [u8; 32] = slipstream_sign::encode::unhex(text.trim())
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| {
                AuthorityError::Settings(format!(
                    "the master key file {} must hold 64 hex digits (32 bytes)",
                    path.display()
                ))
            })?;
        Self::from_bytes(&bytes)
    }

    /// Writes a new random master key to `path` (readable by its owner only); refuses to
    /// overwrite one, which would make every sealed secret unreadable.
    pub fn create(path: &Path) -> Result<(), AuthorityError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut bytes = [0u8; 32];
        random(&mut bytes)?;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| {
                AuthorityError::Settings(format!("cannot create {}: {e}", path.display()))
            })?;
        let text = slipstream_sign::encode::hex(&bytes);
        file.write_all(format!("{text}\n").as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| AuthorityError::Settings(format!("cannot write {}: {e}", path.display())))
    }

    fn from_bytes(bytes: &[u8; 32]) -> Result<Self, AuthorityError> {
        let key = UnboundKey::new(&AES_256_GCM, bytes)
            .map_err(|_| AuthorityError::Store("AES-256-GCM refused the key".into()))?;
        Ok(Self {
            key: LessSafeKey::new(key),
        })
    }

    /// `nonce ‖ ciphertext ‖ tag` of `secret`, bound to `access_key_id`.
    pub(crate) fn seal(
        &self,
        access_key_id: &str,
        secret: &str,
    ) -> Result<Vec<u8>, AuthorityError> {
        let mut nonce = [0u8; NONCE_LEN];
        random(&mut nonce)?;
        let mut data = secret.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(access_key_id.as_bytes()),
                &mut data,
            )
            .map_err(|_| AuthorityError::Store("sealing a secret failed".into()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        Ok(out)
    }

    /// The secret sealed by [`MasterKey::seal`]; an error if the master key is not the one it
    /// was sealed with, or the row was tampered with.
    pub(crate) fn open(
        &self,
        access_key_id: &str,
        sealed: &[u8],
    ) -> Result<String, AuthorityError> {
        let refused = || {
            AuthorityError::Store(format!(
                "the secret of {access_key_id} does not open with this master key (another key file, or a tampered row)"
            ))
        };
        if sealed.len() < NONCE_LEN {
            return Err(refused());
        }
        let (nonce, data) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| refused())?;
        let mut data = data.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(access_key_id.as_bytes()), &mut data)
            .map_err(|_| refused())?;
        String::from_utf8(plain.to_vec()).map_err(|_| refused())
    }
}

/// Fills `out` from the system's random source.
pub(crate) fn random(out: &mut [u8]) -> Result<(), AuthorityError> {
    aws_lc_rs::rand::fill(out).map_err(|_| AuthorityError::Store("no randomness".into()))
}

/// `len` characters drawn uniformly from `alphabet` (at most 256 characters).
pub(crate) fn random_text(alphabet: &[u8], len: usize) -> Result<String, AuthorityError> {
    // Bytes at or above the largest multiple of the alphabet's size are drawn again (no bias).
    let limit = 256 - 256 % alphabet.len();
    let mut out = String::with_capacity(len);
    let mut buf = [0u8; 64];
    while out.len() < len {
        random(&mut buf)?;
        for b in buf {
            if usize::from(b) < limit && out.len() < len {
                out.push(char::from(alphabet[usize::from(b) % alphabet.len()]));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_only_for_their_key_and_master() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("master.key");
        MasterKey::create(&path).unwrap();
        assert!(MasterKey::create(&path).is_err(), "never overwritten");
        let master = MasterKey::load(&path).unwrap();
        let sealed = master.seal("AKID", "wJalrXUtnFEMI").unwrap();
        assert!(
            !sealed.windows(5).any(|w| w == b"wJalr"),
            "not in the clear"
        );
        assert_eq!(master.open("AKID", &sealed).unwrap(), "wJalrXUtnFEMI");
        assert!(
            master.open("OTHER", &sealed).is_err(),
            "bound to its key id"
        );
        let mut tampered = sealed.clone();
        tampered[20] ^= 1;
        assert!(master.open("AKID", &tampered).is_err());
        let other = dir.path().join("other.key");
        MasterKey::create(&other).unwrap();
        assert!(MasterKey::load(&other)
            .unwrap()
            .open("AKID", &sealed)
            .is_err());
        assert_ne!(
            sealed,
            master.seal("AKID", "wJalrXUtnFEMI").unwrap(),
            "fresh nonces"
        );
    }

    #[test]
    fn random_text_uses_the_whole_alphabet() {
        let text = random_text(b"ab", 2000).unwrap();
        assert_eq!(text.len(), 2000);
        let a = text.bytes().filter(|b| *b == b'a').count();
        assert!((800..1200).contains(&a), "{a}");
    }
}
