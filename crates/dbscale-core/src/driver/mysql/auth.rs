//! Password scrambles of the two authentication plugins the lean client speaks:
//! `mysql_native_password` (SHA-1) and `caching_sha2_password`'s fast path (SHA-256).

use sha1::Sha1;
use sha2::{Digest, Sha256};

pub(super) const NATIVE: &str = "mysql_native_password";
pub(super) const CACHING_SHA2: &str = "caching_sha2_password";

/// The auth response for `plugin`, or `None` for a plugin this client does not speak.
pub(super) fn scramble(plugin: &str, password: &[u8], nonce: &[u8]) -> Option<Vec<u8>> {
    if password.is_empty() {
        return matches!(plugin, NATIVE | CACHING_SHA2).then(Vec::new);
    }
    match plugin {
        // SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw)))
        NATIVE => Some(xor_scramble::<Sha1>(password, nonce, true)),
        // SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce)
        CACHING_SHA2 => Some(xor_scramble::<Sha256>(password, nonce, false)),
        _ => None,
    }
}

/// H(pw) XOR H(a + b), where a, b are the nonce and H(H(pw)), the nonce first or second.
fn xor_scramble<H: Digest>(password: &[u8], nonce: &[u8], nonce_first: bool) -> Vec<u8> {
    let hash = H::digest(password);
    let double = H::digest(&hash);
    let (a, b): (&[u8], &[u8]) = if nonce_first {
        (nonce, &double)
    } else {
        (&double, nonce)
    };
    let mix = H::new().chain_update(a).chain_update(b).finalize();
    hash.iter().zip(mix).map(|(x, y)| x ^ y).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrambles_have_the_digest_length() {
        let nonce = [7u8; 20];
        assert_eq!(scramble(NATIVE, b"pw", &nonce).unwrap().len(), 20);
        assert_eq!(scramble(CACHING_SHA2, b"pw", &nonce).unwrap().len(), 32);
        assert_eq!(scramble(NATIVE, b"", &nonce), Some(Vec::new()));
        assert_eq!(scramble("dialog", b"pw", &nonce), None);
        // The same password and nonce always give the same answer; another nonce another one.
        assert_ne!(
            scramble(NATIVE, b"pw", &nonce),
            scramble(NATIVE, b"pw", &[8u8; 20])
        );
    }
}
