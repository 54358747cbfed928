//! Certificates made at test time (`rcgen`), so no private key is ever
//! committed: a test CA and a server certificate it signs, as PEM, and the
//! files of a configuration directory that serves HTTPS with them.
//!
//! Only with the `tls` feature; what the daemons do with the files is
//! theirs to test.

use std::path::Path;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

/// A test CA and one server certificate it signed, all PEM.
pub struct TestPki {
    /// The CA's certificate: what a client trusts.
    pub ca_pem: String,
    /// The server's certificate (valid for `localhost` and `127.0.0.1`).
    pub cert_pem: String,
    /// The server's private key (PKCS#8).
    pub key_pem: String,
}

impl TestPki {
    /// A fresh CA (named `name`) and a server certificate for `localhost`
    /// and `127.0.0.1` signed by it.
    pub fn new(name: &str) -> TestPki {
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("no names to check");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, name);
        let ca_key = KeyPair::generate().expect("ring makes a key");
        let ca = CertifiedIssuer::self_signed(ca, ca_key).expect("a CA signs itself");
        let server = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("valid names");
        let key = KeyPair::generate().expect("ring makes a key");
        let cert = server.signed_by(&key, &ca).expect("the CA signs");
        TestPki {
            ca_pem: ca.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// The certificate and the key in one PEM file, as
    /// `ssl.server.keystore.location` names it.
    pub fn server_pem(&self) -> String {
        format!("{}{}", self.cert_pem, self.key_pem)
    }

    /// Writes `server.pem` (chain and key), `ca.pem`, an `ssl-server.xml`
    /// naming the first and an `ssl-client.xml` naming the second into `dir`.
    pub fn write_conf(&self, dir: &Path) {
        std::fs::write(dir.join("server.pem"), self.server_pem()).expect("write server.pem");
        std::fs::write(dir.join("ca.pem"), &self.ca_pem).expect("write ca.pem");
        std::fs::write(
            dir.join("ssl-server.xml"),
            crate::site_xml(&[
                ("ssl.server.keystore.location", "server.pem"),
                ("ssl.server.keystore.type", "pem"),
            ]),
        )
        .expect("write ssl-server.xml");
        std::fs::write(
            dir.join("ssl-client.xml"),
            crate::site_xml(&[
                ("ssl.client.truststore.location", "ca.pem"),
                ("ssl.client.truststore.type", "pem"),
            ]),
        )
        .expect("write ssl-client.xml");
    }
}
