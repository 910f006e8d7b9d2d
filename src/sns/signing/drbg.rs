//! A deterministic random bit generator (HMAC_DRBG with SHA-256, NIST SP 800-90A, without
//! reseeding) for the signing key's generation and the signatures' blinding. The core has
//! no RNG of its own: it is seeded with what the edge made random for the request (its
//! request id) and the deployment's secret, so its output is unpredictable to a client.

use hmac::{Hmac, Mac};
use rand_core::{CryptoRng, RngCore};
use sha2::Sha256;

pub struct Drbg {
    key: [u8; 32],
    value: [u8; 32],
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC accepts any key length");
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

impl Drbg {
    /// A generator seeded with `seed` (each part is taken whole, in order).
    pub fn new(seed: &[&[u8]]) -> Drbg {
        let mut d = Drbg {
            key: [0; 32],
            value: [1; 32],
        };
        d.update(seed);
        d
    }

    fn update(&mut self, data: &[&[u8]]) {
        for round in [0u8, 1] {
            if round == 1 && data.iter().all(|p| p.is_empty()) {
                return;
            }
            let mut parts: Vec<&[u8]> = vec![&self.value, std::slice::from_ref(&round)];
            parts.extend_from_slice(data);
            self.key = hmac(&self.key, &parts);
            self.value = hmac(&self.key, &[&self.value]);
        }
    }
}

impl RngCore for Drbg {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(32) {
            self.value = hmac(&self.key, &[&self.value]);
            chunk.copy_from_slice(&self.value[..chunk.len()]);
        }
        self.update(&[]);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for Drbg {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_stream_and_another_seed_another() {
        let mut a = Drbg::new(&[b"request-1", b"secret"]);
        let mut b = Drbg::new(&[b"request-1", b"secret"]);
        let mut c = Drbg::new(&[b"request-2", b"secret"]);
        let (mut x, mut y, mut z) = ([0u8; 100], [0u8; 100], [0u8; 100]);
        a.fill_bytes(&mut x);
        b.fill_bytes(&mut y);
        c.fill_bytes(&mut z);
        assert_eq!(x, y);
        assert_ne!(x, z);
        // Successive draws differ.
        let mut x2 = [0u8; 100];
        a.fill_bytes(&mut x2);
        assert_ne!(x, x2);
        assert_ne!(a.next_u64(), a.next_u64());
    }

    /// SP 800-90A's HMAC_DRBG (SHA-256, no prediction resistance, no reseed): the first
    /// vector of NIST's CAVP file HMAC_DRBG.rsp, [SHA-256] [PredictionResistance = False]
    /// [EntropyInputLen = 256] [NonceLen = 128] [PersonalizationStringLen = 0]
    /// [AdditionalInputLen = 0]: two generate calls of 1024 bits, the second returned.
    #[test]
    fn matches_nists_first_vector() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let entropy = hex("ca851911349384bffe89de1cbdc46e6831e44d34a4fb935ee285dd14b71a7488");
        let nonce = hex("659ba96c601dc69fc902940805ec0ca8");
        let mut d = Drbg::new(&[&entropy, &nonce]);
        let mut out = [0u8; 128];
        d.fill_bytes(&mut out);
        d.fill_bytes(&mut out);
        assert_eq!(
            out.to_vec(),
            hex("e528e9abf2dece54d47c7e75e5fe302149f817ea9fb4bee6f4199697d04d5b89d54fbb978a15b5c443c9ec21036d2460b6f73ebad0dc2aba6e624abf07745bc107694bb7547bb0995f70de25d6b29e2d3011bb19d27676c07162c8b5ccde0668961df86803482cb37ed6d5c0bb8d50cf1f50d476aa0458bdaba806f48be9dcb8")
        );
    }
}
