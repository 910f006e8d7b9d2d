//! `{"cidr": "10.0.0.0/24"}` and its IPv6 form: matches string values that are IP
//! addresses inside the block.

use std::net::IpAddr;

#[derive(Debug, Clone, PartialEq)]
pub enum Cidr {
    V4 { network: u32, mask: u32 },
    V6 { network: u128, mask: u128 },
}

impl Cidr {
    /// Compiles a block; the error is the sentence without the AWS prefix. Host bits set
    /// below the mask are ignored (`10.0.0.7/24` is `10.0.0.0/24`).
    pub fn compile(text: &str) -> Result<Cidr, String> {
        let mut parts = text.split('/');
        let (Some(address), Some(bits), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err("Malformed CIDR, one '/' required".to_string());
        };
        let bits: u32 = bits
            .parse()
            .map_err(|_| "Malformed CIDR, mask bits must be an integer".to_string())?;
        let address: IpAddr = address
            .parse()
            .map_err(|_| format!("Nonstandard IP address: {address}"))?;
        match address {
            IpAddr::V4(v4) => {
                if bits > 32 {
                    return Err(format!(
                        "Malformed CIDR, mask bits must be between 0 and 32: {bits}"
                    ));
                }
                let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
                Ok(Cidr::V4 {
                    network: u32::from(v4) & mask,
                    mask,
                })
            }
            IpAddr::V6(v6) => {
                if bits > 128 {
                    return Err(format!(
                        "Malformed CIDR, mask bits must be between 0 and 128: {bits}"
                    ));
                }
                let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                Ok(Cidr::V6 {
                    network: u128::from(v6) & mask,
                    mask,
                })
            }
        }
    }

    /// Whether `value` is an address of the same family inside the block.
    pub fn matches(&self, value: &str) -> bool {
        match (self, value.parse::<IpAddr>()) {
            (Cidr::V4 { network, mask }, Ok(IpAddr::V4(v4))) => u32::from(v4) & mask == *network,
            (Cidr::V6 { network, mask }, Ok(IpAddr::V6(v6))) => u128::from(v6) & mask == *network,
            _ => false,
        }
    }
}
