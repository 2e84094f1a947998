//! SigV4A (`AWS4-ECDSA-P256-SHA256`): the key derivation and the ECDSA signature.
//!
//! The private key is derived from the credentials alone (not the date or region), so one key
//! per credential serves every request, and a signature is valid for a set of regions. Whoever
//! verifies needs only the public key, which cannot forge requests.
//!
//! Key derivation, NIST SP 800-108 counter mode with HMAC-SHA256:
//! `K0 = HMAC("AWS4A" + secret, 0x00000001 || "AWS4-ECDSA-P256-SHA256" || 0x00 || access_key_id
//! || counter || 0x00000100)`, counter from 1, repeated while `K0 > n - 2`; the scalar is `K0 + 1`.
//! Signatures are ECDSA P-256 over SHA-256 of the string to sign, DER-encoded, in lowercase hex;
//! ECDSA nonces come from the operating system's random generator (the only input this crate
//! takes from outside its arguments).

use std::fmt;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    EcdsaKeyPair, KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_ASN1,
    ECDSA_P256_SHA256_ASN1_SIGNING,
};
use zeroize::Zeroize;

use crate::key::hmac;
use crate::{Credentials, Error};

/// The SigV4A algorithm name.
pub const ALGORITHM_V4A: &str = "AWS4-ECDSA-P256-SHA256";

/// Whether `len` hex digits can be a DER-encoded P-256 signature. ECDSA signatures are
/// randomized and DER drops leading zero bytes, so r and s take 1 to 33 bytes each: about one
/// signature in 500 is shorter than 70 bytes, and a check that wants 140 digits fails at random.
pub(crate) fn is_signature_hex_len(len: usize) -> bool {
    (16..=144).contains(&len) && len % 2 == 0
}

/// The order of the P-256 group, minus 2: derived values above it are rejected.
const N_MINUS_2: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x4f,
];

/// The private scalar for `credentials`, big-endian.
pub fn derive_private_scalar(
    access_key_id: &str,
    secret_access_key: &str,
) -> Result<[u8; 32], Error> {
    let mut key = Vec::with_capacity(5 + secret_access_key.len());
    key.extend_from_slice(b"AWS4A");
    key.extend_from_slice(secret_access_key.as_bytes());
    let mut input = Vec::with_capacity(64 + access_key_id.len());
    input.extend_from_slice(&[0, 0, 0, 1]);
    input.extend_from_slice(ALGORITHM_V4A.as_bytes());
    input.push(0);
    input.extend_from_slice(access_key_id.as_bytes());
    let counter_at = input.len();
    input.push(1);
    input.extend_from_slice(&[0, 0, 1, 0]);
    let mut result = Err(Error::InvalidCredentials(
        "no SigV4A key could be derived from these credentials",
    ));
    for counter in 1..=254u8 {
        input[counter_at] = counter;
        let mut k0 = hmac(&key, &input);
        // Big-endian byte arrays compare like the numbers they hold.
        if k0 <= N_MINUS_2 {
            add_one(&mut k0);
            result = Ok(k0);
            break;
        }
        k0.zeroize();
    }
    key.zeroize();
    result
}

fn add_one(n: &mut [u8; 32]) {
    for b in n.iter_mut().rev() {
        let (v, carry) = b.overflowing_add(1);
        *b = v;
        if !carry {
            break;
        }
    }
}

/// A SigV4A signing key: the derived P-256 key pair of one credential.
pub struct EcdsaKey {
    pair: EcdsaKeyPair,
}

impl EcdsaKey {
    /// Derives the key of `credentials` (about 50 µs: do it once per credential).
    pub fn derive(credentials: &Credentials) -> Result<Self, Error> {
        let mut d =
            derive_private_scalar(credentials.access_key_id(), credentials.secret_access_key())?;
        let pair = from_scalar(&d);
        d.zeroize();
        Ok(Self { pair: pair? })
    }

    /// The uncompressed public point `04 || X || Y` (65 bytes): what a verifier needs.
    pub fn public_key(&self) -> &[u8] {
        self.pair.public_key().as_ref()
    }

    /// Appends the hex DER signature of `string_to_sign` to `out`.
    pub fn sign_into(&self, string_to_sign: &[u8], out: &mut String) -> Result<(), Error> {
        let sig = self
            .pair
            .sign(&SystemRandom::new(), string_to_sign)
            .map_err(|_| Error::Crypto("ECDSA signing failed"))?;
        crate::encode::hex_into(out, sig.as_ref());
        Ok(())
    }

    /// The hex DER signature of `string_to_sign`.
    pub fn sign(&self, string_to_sign: &[u8]) -> Result<String, Error> {
        let mut out = String::with_capacity(144);
        self.sign_into(string_to_sign, &mut out)?;
        Ok(out)
    }
}

/// Builds the key pair from the scalar: RFC 5915 `ECPrivateKey` without the public key, which
/// aws-lc computes.
fn from_scalar(d: &[u8; 32]) -> Result<EcdsaKeyPair, Error> {
    const HEAD: [u8; 7] = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20];
    const CURVE: [u8; 12] = [
        0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
    ];
    let mut der = [0u8; 51];
    der[..7].copy_from_slice(&HEAD);
    der[7..39].copy_from_slice(d);
    der[39..].copy_from_slice(&CURVE);
    let pair = EcdsaKeyPair::from_private_key_der(&ECDSA_P256_SHA256_ASN1_SIGNING, &der);
    der.zeroize();
    pair.map_err(|_| Error::Crypto("the derived SigV4A key was rejected"))
}

/// Whether `signature_hex` (hex DER) is a valid signature of `string_to_sign` by `public_key`
/// (uncompressed point). Verification needs no secret.
pub fn verify(public_key: &[u8], string_to_sign: &[u8], signature_hex: &str) -> bool {
    let Some(sig) = decode_hex(signature_hex) else {
        return false;
    };
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, public_key)
        .verify(string_to_sign, &sig)
        .is_ok()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || s.len() > 2 * 80 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl fmt::Debug for EcdsaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EcdsaKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::hex;

    /// Both scalars are given in the test suite's README: the suite's credentials (our own
    /// derivation, cross-checked there) and aws-c-auth's key-derivation vector.
    #[test]
    fn derives_the_documented_scalars_and_points() {
        let d = derive_private_scalar("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
            .unwrap();
        assert_eq!(
            hex(&d),
            "7efc8c0e65a324242818c5a50c891c6060b6a00717b7ba3cbe3c5d765be9259c"
        );
        let key = EcdsaKey::derive(
            &Credentials::new(
                "AKIDEXAMPLE",
                "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                None,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            hex(key.public_key()),
            "04b6618f6a65740a99e650b33b6b4b5bd0d43b176d721a3edfea7e7d2d56d936b1865ed22a7eadc9c5cb9d2cbaca1b3699139fedc5043dc6661864218330c8e518"
        );
        let d = derive_private_scalar(
            "AKISORANDOMAASORANDOM",
            "q+jcrXGc+0zWN6uzclKVhvMmUsIfRPa4rlRandom",
        )
        .unwrap();
        assert_eq!(
            hex(&d),
            "7fd3bd010c0d9c292141c2b77bfbde1042c92e6836fff749d1269ec890fca1bd"
        );
        let key = EcdsaKey::derive(
            &Credentials::new(
                "AKISORANDOMAASORANDOM",
                "q+jcrXGc+0zWN6uzclKVhvMmUsIfRPa4rlRandom",
                None,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            hex(key.public_key()),
            "0415d242ceebf8d8169fd6a8b5a746c41140414c3b07579038da06af89190fffcb0515242cedd82e94799482e4c0514b505afccf2c0c98d6a553bf539f424c5ec0"
        );
    }

    #[test]
    fn signatures_verify_and_tampering_does_not() {
        let key = EcdsaKey::derive(&Credentials::new("AKID", "secret", None).unwrap()).unwrap();
        let sig = key.sign(b"string to sign").unwrap();
        assert!(verify(key.public_key(), b"string to sign", &sig));
        assert!(!verify(key.public_key(), b"string to sigN", &sig));
        let mut bad = sig.clone().into_bytes();
        bad[20] = if bad[20] == b'0' { b'1' } else { b'0' };
        assert!(!verify(
            key.public_key(),
            b"string to sign",
            &String::from_utf8(bad).unwrap()
        ));
        assert!(!verify(key.public_key(), b"string to sign", "zz"));
        assert_ne!(
            sig,
            key.sign(b"string to sign").unwrap(),
            "ECDSA nonces are random"
        );
    }

    #[test]
    fn add_one_carries() {
        let mut n = [0xffu8; 32];
        n[0] = 0;
        add_one(&mut n);
        assert_eq!(n[0], 1);
        assert!(n[1..].iter().all(|&b| b == 0));
    }

    #[test]
    fn debug_is_redacted() {
        let key = EcdsaKey::derive(&Credentials::new("AKID", "secret", None).unwrap()).unwrap();
        assert_eq!(format!("{key:?}"), "EcdsaKey(<redacted>)");
    }
}
