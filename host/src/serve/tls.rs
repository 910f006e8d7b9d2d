//! Outgoing `https`: what the component sends to an `https://` URL (an SNS subscriber, or a
//! broker behind TLS). One connection per request, verified against the public roots
//! (`webpki-roots`) plus the certificate authorities of `QUEEN_SQS_TLS_CA_FILE`, if set (a
//! private CA, a test's own). Plain `http` keeps the pooled client of `outgoing`.

use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use wasmtime_wasi_http::{Error, WasiBody};

/// Extra trusted certificate authorities for outgoing `https`: a PEM file.
pub const CA_FILE_VAR: &str = "QUEEN_SQS_TLS_CA_FILE";

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct TlsClient {
    connector: tokio_rustls::TlsConnector,
}

impl TlsClient {
    /// The public roots, plus those of `ca_file` (PEM). An unreadable file, or one with no
    /// certificate, is an error: the operator asked for it.
    pub fn new(ca_file: Option<&str>) -> Result<TlsClient, String> {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        if let Some(path) = ca_file {
            let pem = std::fs::read(path).map_err(|e| format!("{CA_FILE_VAR}={path}: {e}"))?;
            let mut added = 0;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| format!("{CA_FILE_VAR}={path}: {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("{CA_FILE_VAR}={path}: {e}"))?;
                added += 1;
            }
            if added == 0 {
                return Err(format!("{CA_FILE_VAR}={path}: no PEM certificate in it"));
            }
        }
        // ring, as wasmtime-wasi-http's own client: aws-lc-rs would add a C build with cmake
        // (rustls marks ring's provider deprecated for lacking post-quantum key exchange).
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TlsClient {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
        })
    }

    /// Sends one request over a fresh TLS connection; the answer's body streams.
    pub async fn send(
        &self,
        mut request: http::Request<WasiBody>,
    ) -> Result<http::Response<WasiBody>, Error> {
        let uri = request.uri().clone();
        let host = uri.host().ok_or(Error::HttpRequestUriInvalid)?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = uri.port_u16().unwrap_or(443);
        let name = match host.parse::<std::net::IpAddr>() {
            Ok(ip) => ServerName::from(ip),
            Err(_) => {
                ServerName::try_from(host.to_string()).map_err(|_| Error::HttpRequestUriInvalid)?
            }
        };
        let tcp = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((host, port)))
            .await
            .map_err(|_| Error::ConnectionTimeout)?
            .map_err(|_| Error::ConnectionRefused)?;
        let _ = tcp.set_nodelay(true);
        let tls = tokio::time::timeout(CONNECT_TIMEOUT, self.connector.connect(name, tcp))
            .await
            .map_err(|_| Error::ConnectionTimeout)?
            .map_err(Error::Tls)?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|_| Error::TlsProtocolError)?;
        tokio::spawn(async move {
            let _connection_ended = conn.await;
        });
        // The request line names the path only (the authority goes in `Host`).
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        *request.uri_mut() = http::Uri::try_from(path).map_err(|_| Error::HttpRequestUriInvalid)?;
        if !request.headers().contains_key(http::header::HOST) {
            if let Some(authority) = uri.authority() {
                if let Ok(v) = http::HeaderValue::from_str(authority.as_str()) {
                    request.headers_mut().insert(http::header::HOST, v);
                }
            }
        }
        let resp = sender
            .send_request(request)
            .await
            .map_err(|_| Error::ConnectionTerminated)?;
        Ok(resp.map(|b| b.map_err(Error::from).boxed_unsync()))
    }
}
