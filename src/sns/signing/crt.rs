//! RSASSA-PKCS1-v1_5 signing of the deployment's 2048-bit key by the Chinese remainder
//! theorem on fixed-size integers: two 1024-bit Montgomery exponentiations.
//!
//! Why not the `rsa` crate's own signing: its big integers use 64-bit digits, and WebAssembly
//! has no 64×64→128-bit multiply, so in the component each signature took ~7 ms of guest CPU,
//! the whole cost of an enveloped `Publish`. `crypto-bigint` uses the target's word (32 bits
//! in wasm32) and fixed sizes; the same signature takes about half as long. Its
//! exponentiation and reductions run in constant time, so no blinding is needed; each
//! signature is checked against the public key before it is used (a fault in a CRT signature
//! would otherwise give the key away), and a key of any other shape is signed by the `rsa`
//! crate as before (`Signer::sign`).
//!
//! PKCS#1 v1.5 signatures are deterministic: the tests compare every byte with the `rsa`
//! crate's.

use crypto_bigint::modular::{MontyForm, MontyParams};
use crypto_bigint::{NonZero, Odd, U1024, U2048};
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use rsa::{BigUint, RsaPrivateKey};

/// Bytes of the modulus (and of a signature).
pub const MODULUS_BYTES: usize = 256;

/// DER of the DigestInfo header before the digest (RFC 8017, section 9.2, note 1).
pub const SHA1_PREFIX: &[u8] = &[
    0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14,
];
pub const SHA256_PREFIX: &[u8] = &[
    0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05,
    0x00, 0x04, 0x20,
];

type Half = MontyParams<{ U1024::LIMBS }>;

pub struct CrtKey {
    p: Half,
    q: Half,
    p_as_wide: NonZero<U2048>,
    q_as_wide: NonZero<U2048>,
    p_as_half: NonZero<U1024>,
    q_value: U1024,
    dp: U1024,
    dq: U1024,
    qinv: U1024,
    n: MontyParams<{ U2048::LIMBS }>,
    e: U2048,
}

fn fixed<const N: usize, T>(v: &BigUint, from: impl Fn(&[u8]) -> T) -> Option<T> {
    let bytes = v.to_bytes_be();
    if bytes.len() > N {
        return None;
    }
    let mut padded = [0u8; N];
    padded[N - bytes.len()..].copy_from_slice(&bytes);
    Some(from(&padded))
}

fn half(v: &BigUint) -> Option<U1024> {
    fixed::<128, _>(v, U1024::from_be_slice)
}

fn wide(v: &BigUint) -> Option<U2048> {
    fixed::<256, _>(v, U2048::from_be_slice)
}

impl CrtKey {
    /// The key's CRT form; `None` unless it is a two-prime 2048-bit key with its
    /// precomputed values.
    pub fn of(key: &RsaPrivateKey) -> Option<CrtKey> {
        if key.size() != MODULUS_BYTES {
            return None;
        }
        let [p, q] = key.primes() else {
            return None;
        };
        let qinv = key.qinv()?.to_biguint()?;
        let (p, q) = (half(p)?, half(q)?);
        Some(CrtKey {
            p: MontyParams::new(Odd::new(p).into_option()?),
            q: MontyParams::new(Odd::new(q).into_option()?),
            p_as_wide: NonZero::new(p.resize()).into_option()?,
            q_as_wide: NonZero::new(q.resize()).into_option()?,
            p_as_half: NonZero::new(p).into_option()?,
            q_value: q,
            dp: half(key.dp()?)?,
            dq: half(key.dq()?)?,
            qinv: half(&qinv)?,
            n: MontyParams::new_vartime(Odd::new(wide(key.n())?).into_option()?),
            e: wide(key.e())?,
        })
    }

    /// The signature of `digest` (a DigestInfo `prefix` names its algorithm); `None` if
    /// the result does not verify.
    pub fn sign(&self, prefix: &[u8], digest: &[u8]) -> Option<[u8; MODULUS_BYTES]> {
        let m = U2048::from_be_slice(&encode(prefix, digest)?);
        let mp: U1024 = m.rem(&self.p_as_wide).resize();
        let mq: U1024 = m.rem(&self.q_as_wide).resize();
        let s1 = MontyForm::new(&mp, self.p).pow(&self.dp);
        let s2 = MontyForm::new(&mq, self.q).pow(&self.dq).retrieve();
        // Garner: s = s2 + q·((s1 − s2)·q⁻¹ mod p).
        let s2_mod_p = MontyForm::new(&s2.rem(&self.p_as_half), self.p);
        let h = ((s1 - s2_mod_p) * MontyForm::new(&self.qinv, self.p)).retrieve();
        let s: U2048 = h.widening_mul(&self.q_value);
        let s = s.wrapping_add(&s2.resize());
        let back = MontyForm::new(&s, self.n)
            .pow_bounded_exp(&self.e, 32)
            .retrieve();
        (back == m).then(|| s.to_be_bytes())
    }
}

/// EMSA-PKCS1-v1_5: `00 01 FF… 00 DigestInfo`, the modulus's length.
fn encode(prefix: &[u8], digest: &[u8]) -> Option<[u8; MODULUS_BYTES]> {
    let t = prefix.len() + digest.len();
    if t + 11 > MODULUS_BYTES {
        return None;
    }
    let mut em = [0xffu8; MODULUS_BYTES];
    em[0] = 0;
    em[1] = 1;
    em[MODULUS_BYTES - t - 1] = 0;
    em[MODULUS_BYTES - t..MODULUS_BYTES - digest.len()].copy_from_slice(prefix);
    em[MODULUS_BYTES - digest.len()..].copy_from_slice(digest);
    Some(em)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::pkcs1v15::SigningKey;
    use rsa::signature::{SignatureEncoding, Signer};
    use sha2::{Digest, Sha256};

    fn key() -> RsaPrivateKey {
        let mut rng = super::super::drbg::Drbg::new(&[b"crt test key"]);
        RsaPrivateKey::new(&mut rng, 2048).expect("a key")
    }

    #[test]
    fn signatures_match_the_rsa_crates_byte_for_byte() {
        let key = key();
        let crt = CrtKey::of(&key).expect("a two-prime 2048-bit key");
        for (i, message) in ["", "hello", &"x".repeat(5000), "Message\nhi\n"]
            .iter()
            .enumerate()
        {
            let sha1 = sha1::Sha1::digest(message.as_bytes());
            let expected = SigningKey::<sha1::Sha1>::new(key.clone())
                .sign(message.as_bytes())
                .to_bytes();
            let got = crt.sign(SHA1_PREFIX, &sha1).expect("verifies");
            assert_eq!(got.as_slice(), &*expected, "SHA-1, message {i}");
            let sha256 = Sha256::digest(message.as_bytes());
            let expected = SigningKey::<Sha256>::new(key.clone())
                .sign(message.as_bytes())
                .to_bytes();
            let got = crt.sign(SHA256_PREFIX, &sha256).expect("verifies");
            assert_eq!(got.as_slice(), &*expected, "SHA-256, message {i}");
        }
    }

    /// A key of another size is left to the `rsa` crate.
    #[test]
    fn other_key_sizes_have_no_crt_form() {
        let mut rng = super::super::drbg::Drbg::new(&[b"small"]);
        let small = RsaPrivateKey::new(&mut rng, 1024).expect("a key");
        assert!(CrtKey::of(&small).is_none());
    }

    /// A signature that does not verify is never returned (a wrong CRT coefficient stands
    /// in for a computing fault).
    #[test]
    fn a_faulty_signature_is_withheld() {
        let key = key();
        let mut crt = CrtKey::of(&key).expect("crt");
        crt.qinv = crt.qinv.wrapping_add(&U1024::ONE);
        let digest = Sha256::digest(b"m");
        assert!(crt.sign(SHA256_PREFIX, &digest).is_none());
    }
}
