//! A subscriber for the SNS `http`/`https` tests (as `mod sns_receiver;`): a small server
//! that records every request and answers 200, or 500 while told to fail, or late while
//! told to hang; over plain HTTP or TLS (a certificate of a throwaway CA made by OpenSSL).
#![allow(dead_code)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One POST a receiver took.
#[derive(Debug, Clone)]
pub struct Received {
    pub at: Instant,
    pub headers: BTreeMap<String, String>,
    pub body: String,
    /// What the receiver answered.
    pub status: u16,
}

impl Received {
    pub fn kind(&self) -> &str {
        self.headers
            .get("x-amz-sns-message-type")
            .map(String::as_str)
            .unwrap_or("")
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct ReceiverState {
    got: Vec<Received>,
    /// Notifications still to be failed with a 500 (`usize::MAX`: all of them).
    fail_notifications: usize,
    /// Notifications are answered only after this long (a subscriber that hangs).
    hang: Option<Duration>,
    /// TCP connections accepted (a TLS handshake that fails records no request).
    connections: usize,
    /// How notifications are answered otherwise (default 200 and "ok").
    notification_answer: Option<(u16, usize)>,
}

/// A subscriber: records every request, answers 200 (or 500 while told to fail).
#[derive(Clone)]
pub struct Receiver {
    addr: SocketAddr,
    /// `http` or `https`.
    scheme: &'static str,
    state: Arc<Mutex<ReceiverState>>,
    server: Arc<tokio::task::JoinHandle<()>>,
}

/// Records a request and answers it as the receiver's state says.
async fn answer(
    state: Arc<Mutex<ReceiverState>>,
    req: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, std::convert::Infallible> {
    let headers: BTreeMap<String, String> = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body = String::from_utf8_lossy(&body).into_owned();
    let notification =
        headers.get("x-amz-sns-message-type").map(String::as_str) == Some("Notification");
    let hang = state.lock().unwrap().hang.filter(|_| notification);
    let body_size;
    let status = match hang {
        Some(d) => {
            // Recorded as it arrives (status 0: never answered in time).
            let at = Instant::now();
            state.lock().unwrap().got.push(Received {
                at,
                headers,
                body,
                status: 0,
            });
            tokio::time::sleep(d).await;
            return Ok(hyper::Response::new(Full::new(Bytes::from_static(b"late"))));
        }
        None => {
            let mut s = state.lock().unwrap();
            let (status, size) = if notification && s.fail_notifications > 0 {
                if s.fail_notifications != usize::MAX {
                    s.fail_notifications -= 1;
                }
                (500, 0)
            } else if notification {
                s.notification_answer.unwrap_or((200, 0))
            } else {
                (200, 0)
            };
            body_size = size;
            s.got.push(Received {
                at: Instant::now(),
                headers,
                body,
                status,
            });
            status
        }
    };
    let body = if body_size > 0 {
        Bytes::from(vec![b'x'; body_size])
    } else {
        Bytes::from_static(b"ok")
    };
    let resp = hyper::Response::builder()
        .status(status)
        .header("location", "http://127.0.0.1:9/elsewhere")
        .body(Full::new(body))
        .unwrap();
    Ok(resp)
}

impl Receiver {
    pub async fn start() -> Receiver {
        Receiver::serve(None).await
    }

    /// Over TLS, with the certificate `certs` issued for 127.0.0.1 and localhost.
    pub async fn start_tls(certs: &TestCerts) -> Receiver {
        Receiver::serve(Some(certs.acceptor())).await
    }

    async fn serve(tls: Option<tokio_rustls::TlsAcceptor>) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(ReceiverState::default()));
        let shared = state.clone();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let server = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                shared.lock().unwrap().connections += 1;
                let state = shared.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| answer(state.clone(), req));
                    let http = http1::Builder::new();
                    let _ = match tls {
                        Some(acceptor) => match acceptor.accept(stream).await {
                            Ok(s) => http.serve_connection(TokioIo::new(s), service).await,
                            Err(_) => return,
                        },
                        None => http.serve_connection(TokioIo::new(stream), service).await,
                    };
                });
            }
        });
        Receiver {
            addr,
            scheme,
            state,
            server: Arc::new(server),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.addr)
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> usize {
        self.state.lock().unwrap().connections
    }

    pub fn hang(&self, d: Duration) {
        self.state.lock().unwrap().hang = Some(d);
    }

    /// Answers notifications with `status` and a body of `size` bytes from now on.
    pub fn answer_notifications(&self, status: u16, size: usize) {
        self.state.lock().unwrap().notification_answer = Some((status, size));
    }

    pub fn fail_notifications(&self, n: usize) {
        self.state.lock().unwrap().fail_notifications = n;
    }

    pub fn got(&self, kind: &str) -> Vec<Received> {
        let s = self.state.lock().unwrap();
        s.got.iter().filter(|r| r.kind() == kind).cloned().collect()
    }

    /// Waits until `n` requests of `kind` arrived (panics after `within`).
    pub async fn wait_for(&self, kind: &str, n: usize, within: Duration) -> Vec<Received> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.got(kind);
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{} of {n} {kind} POSTs arrived within {within:?}: {:?}",
                got.len(),
                got.iter()
                    .map(|r| r.json()["Message"].clone())
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if Arc::strong_count(&self.server) == 1 {
            self.server.abort();
        }
    }
}

/// A throwaway certificate authority and a server certificate it issued for 127.0.0.1 and
/// localhost, made by the `openssl` command in a fresh directory.
pub struct TestCerts {
    pub dir: std::path::PathBuf,
}

impl TestCerts {
    pub fn make(dir: std::path::PathBuf) -> TestCerts {
        std::fs::create_dir_all(&dir).unwrap();
        let run = |args: &[&str]| {
            let out = std::process::Command::new("openssl")
                .args(args)
                .current_dir(&dir)
                .output()
                .expect("the openssl command");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let mut ca = vec![
            "req",
            "-x509",
            "-days",
            "2",
            "-subj",
            "/CN=queen-sqs test CA",
        ];
        ca.extend(ec);
        ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
        run(&ca);
        let mut csr = vec!["req", "-subj", "/CN=localhost"];
        csr.extend(ec);
        csr.extend(["-keyout", "server.key", "-out", "server.csr"]);
        run(&csr);
        std::fs::write(
            dir.join("server.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ]);
        TestCerts { dir }
    }

    /// The CA's certificate, for `QUEEN_SQS_TLS_CA_FILE`.
    pub fn ca_file(&self) -> String {
        self.dir.join("ca.pem").display().to_string()
    }

    fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(self.dir.join("server.pem"))
                .unwrap()
                .map(Result::unwrap)
                .collect();
        let key = PrivateKeyDer::from_pem_file(self.dir.join("server.key")).unwrap();
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        tokio_rustls::TlsAcceptor::from(Arc::new(config))
    }
}
