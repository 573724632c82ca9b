//! `cargo xtask generate-key-pair` and `cargo xtask sign`: cosign's key-based signatures, for
//! a registry reached over plain HTTP (the local registry of `make e2e-registry`, an air-gapped
//! mirror). A release signs keyless with cosign itself (`.github/workflows/release.yml`).
//!
//! The formats are cosign's, so `kwctl verify -k cosign.pub` and a PolicyServer's
//! `verificationConfig` check what this writes:
//! - `cosign.pub`: the P-256 public key, PEM `PUBLIC KEY` (PKIX);
//! - `cosign.key`: the PKCS#8 private key sealed with a password (`COSIGN_PASSWORD`): scrypt
//!   (N 32768, r 8, p 1, a 32-byte salt) derives a nacl/secretbox key, and the PEM
//!   `ENCRYPTED SIGSTORE PRIVATE KEY` holds `{"kdf": …, "cipher": …, "ciphertext": …}`;
//! - a signature: the simple-signing payload naming the module's manifest digest, signed with
//!   ECDSA P-256/SHA-256, pushed as the one layer of an OCI manifest tagged
//!   `sha256-<digest>.sig` in the module's repository, its base64 DER signature in the layer
//!   annotation `dev.cosignproject.cosign/signature`.
//!
//! Built from p256, scrypt and crypto_secretbox: 45 crates, about 4 s cold on two cores. The
//! `sigstore` crate (0.15, features cosign and rustls-tls) does the same with 396 crates (tokio,
//! hyper, reqwest, oci-client, rustls) in about 83 s. Only the harness links either (for xtask and the tests); no policy does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use crypto_secretbox::aead::{Aead, KeyInit};
use crypto_secretbox::{Key, Nonce, XSalsa20Poly1305};
use gangwarden_test_apiserver::client::{self, Response};
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{DerSignature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use rand_core::{OsRng, RngCore};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const PEM_LABEL: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
/// What cosign wrote before it called itself Sigstore; still read.
const OLD_PEM_LABEL: &str = "ENCRYPTED COSIGN PRIVATE KEY";
const SCRYPT_LOG_N: u8 = 15;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
const TIMEOUT: Duration = Duration::from_secs(60);

/// The password cosign reads: `COSIGN_PASSWORD` (empty when unset).
pub fn password_from_env() -> Vec<u8> {
    std::env::var("COSIGN_PASSWORD").unwrap_or_default().into_bytes()
}

fn scrypt_key(password: &[u8], salt: &[u8]) -> Result<[u8; 32], String> {
    let params = scrypt::Params::new(SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P, 32).map_err(|e| e.to_string())?;
    let mut key = [0u8; 32];
    scrypt::scrypt(password, salt, &params, &mut key).map_err(|e| e.to_string())?;
    Ok(key)
}

/// `signing_key` as cosign stores it, sealed with `password`.
pub fn encrypted_pem(signing_key: &SigningKey, password: &[u8]) -> Result<String, String> {
    let der = signing_key.to_pkcs8_der().map_err(|e| e.to_string())?;
    let (mut salt, mut nonce) = ([0u8; 32], [0u8; 24]);
    OsRng.fill_bytes(&mut salt);
    OsRng.fill_bytes(&mut nonce);
    let key = scrypt_key(password, &salt)?;
    let sealed = XSalsa20Poly1305::new(Key::from_slice(&key))
        .encrypt(Nonce::from_slice(&nonce), der.as_bytes())
        .map_err(|e| format!("sealing the key: {e}"))?;
    let data = json!({
        "kdf": {"name": "scrypt", "params": {"N": 1u32 << SCRYPT_LOG_N, "r": SCRYPT_R, "p": SCRYPT_P}, "salt": BASE64.encode(salt)},
        "cipher": {"name": "nacl/secretbox", "nonce": BASE64.encode(nonce)},
        "ciphertext": BASE64.encode(sealed),
    });
    Ok(pem_block(PEM_LABEL, data.to_string().as_bytes()))
}

fn pem_block(label: &str, bytes: &[u8]) -> String {
    let b64 = BASE64.encode(bytes);
    let lines: Vec<&str> = b64.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap_or_default()).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

/// Reads a cosign private key file sealed with `password`.
pub fn read_private_key(path: &Path, password: &[u8]) -> Result<SigningKey, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let body = [PEM_LABEL, OLD_PEM_LABEL]
        .iter()
        .find_map(|label| {
            let begin = text.find(&format!("-----BEGIN {label}-----"))? + label.len() + 16;
            let end = text.find(&format!("-----END {label}-----"))?;
            text.get(begin..end)
        })
        .ok_or(format!("{}: not a cosign private key (no {PEM_LABEL} block)", path.display()))?;
    let bytes =
        BASE64.decode(body.split_whitespace().collect::<String>()).map_err(|e| format!("{}: {e}", path.display()))?;
    let data: Value = serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let field = |pointer: &str| -> Result<Vec<u8>, String> {
        let text = data.pointer(pointer).and_then(Value::as_str).ok_or(format!("{}: no {pointer}", path.display()))?;
        BASE64.decode(text).map_err(|e| format!("{}: {pointer}: {e}", path.display()))
    };
    let params = &data["kdf"]["params"];
    if data["kdf"]["name"] != "scrypt"
        || data["cipher"]["name"] != "nacl/secretbox"
        || params["N"] != json!(1u32 << SCRYPT_LOG_N)
        || params["r"] != json!(SCRYPT_R)
        || params["p"] != json!(SCRYPT_P)
    {
        return Err(format!("{}: a key sealed other than cosign seals keys", path.display()));
    }
    let (salt, nonce) = (field("/kdf/salt")?, field("/cipher/nonce")?);
    if nonce.len() != 24 {
        return Err(format!("{}: the nonce is not 24 bytes", path.display()));
    }
    let key = scrypt_key(password, &salt)?;
    let der = XSalsa20Poly1305::new(Key::from_slice(&key))
        .decrypt(Nonce::from_slice(&nonce), field("/ciphertext")?.as_slice())
        .map_err(|_| format!("{}: wrong password (COSIGN_PASSWORD) or a damaged key", path.display()))?;
    SigningKey::from_pkcs8_der(&der).map_err(|e| format!("{}: not a P-256 key: {e}", path.display()))
}

/// The public key PEM cosign writes to `cosign.pub`.
pub fn public_pem(key: &VerifyingKey) -> Result<String, String> {
    key.to_public_key_pem(LineEnding::LF).map_err(|e| e.to_string())
}

/// Writes `cosign.key` and `cosign.pub` into `dir`; refuses to overwrite a key.
pub fn generate_key_pair(dir: &Path, password: &[u8]) -> Result<(PathBuf, PathBuf), String> {
    let (key_path, pub_path) = (dir.join("cosign.key"), dir.join("cosign.pub"));
    if key_path.exists() {
        return Err(format!("{} exists: not overwritten", key_path.display()));
    }
    let key = SigningKey::random(&mut OsRng);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(&key_path, encrypted_pem(&key, password)?).map_err(|e| format!("{}: {e}", key_path.display()))?;
    std::fs::write(&pub_path, public_pem(key.verifying_key())?).map_err(|e| format!("{}: {e}", pub_path.display()))?;
    Ok((key_path, pub_path))
}

/// An image reference with a digest: `host[:port]/repository@sha256:<hex>`.
struct Reference<'a> {
    registry: &'a str,
    repository: &'a str,
    digest: &'a str,
}

fn parse_reference(reference: &str) -> Result<Reference<'_>, String> {
    let bare = reference.strip_prefix("registry://").unwrap_or(reference);
    let (name, digest) = bare
        .split_once('@')
        .filter(|(_, d)| d.strip_prefix("sha256:").is_some_and(|h| h.len() == 64))
        .ok_or(format!("{reference}: not an image reference with a sha256 digest (host/repository@sha256:…)"))?;
    let (registry, repository) = name.split_once('/').ok_or(format!("{reference}: no registry host"))?;
    Ok(Reference { registry, repository, digest })
}

fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

fn expect(what: &str, r: Response, status: u16) -> Result<Response, String> {
    if r.status == status {
        Ok(r)
    } else {
        Err(format!("{what}: HTTP {} {}", r.status, String::from_utf8_lossy(&r.body)))
    }
}

/// Uploads a blob (`POST` an upload, `PUT` its bytes with their digest).
fn push_blob(base: &str, repository: &str, bytes: &[u8]) -> Result<String, String> {
    let digest = digest_of(bytes);
    let start = client::exchange("POST", &format!("{base}/v2/{repository}/blobs/uploads/"), &[], b"", TIMEOUT)
        .map_err(|e| format!("starting an upload to {base}: {e}"))?;
    let start = expect("starting a blob upload", start, 202)?;
    let location = start.header("location").ok_or("the registry gave no upload location")?;
    let location = if location.starts_with("http") { location.to_string() } else { format!("{base}{location}") };
    let sep = if location.contains('?') { '&' } else { '?' };
    let put = client::exchange(
        "PUT",
        &format!("{location}{sep}digest={digest}"),
        &[("Content-Type", "application/octet-stream")],
        bytes,
        TIMEOUT,
    )
    .map_err(|e| format!("uploading a blob: {e}"))?;
    expect("uploading a blob", put, 201)?;
    Ok(digest)
}

/// Signs the module at `reference` (with its digest) and pushes the signature next to it.
/// Returns the signature's tag.
pub fn sign(key: &SigningKey, reference: &str) -> Result<String, String> {
    let r = parse_reference(reference)?;
    let base = format!("http://{}", r.registry);
    let payload = json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{}", r.registry, r.repository)},
            "image": {"docker-manifest-digest": r.digest},
            "type": "cosign container image signature",
        },
        "optional": null,
    })
    .to_string();
    let signature: DerSignature = key.sign(payload.as_bytes());
    let layer = push_blob(&base, r.repository, payload.as_bytes())?;
    let config = json!({"architecture": "", "os": "", "config": {}, "rootfs": {"type": "layers", "diff_ids": [layer]}})
        .to_string();
    let config_digest = push_blob(&base, r.repository, config.as_bytes())?;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "size": config.len(), "digest": config_digest},
        "layers": [{
            "mediaType": SIMPLE_SIGNING, "size": payload.len(), "digest": layer,
            "annotations": {"dev.cosignproject.cosign/signature": BASE64.encode(signature.as_bytes())},
        }],
    })
    .to_string();
    let tag = format!("{}.sig", r.digest.replace(':', "-"));
    let put = client::exchange(
        "PUT",
        &format!("{base}/v2/{}/manifests/{tag}", r.repository),
        &[("Content-Type", OCI_MANIFEST)],
        manifest.as_bytes(),
        TIMEOUT,
    )
    .map_err(|e| format!("pushing the signature: {e}"))?;
    expect("pushing the signature manifest", put, 201)?;
    Ok(format!("{}/{}:{tag}", r.registry, r.repository))
}

/// The module references `kwctl push -o json` printed, read from its output (`make publish
/// PUBLISHED=<file>` collects one JSON document per push): each document's `immutable_ref`.
/// Anything else in the output is an error, so a change in kwctl's output cannot make the
/// release sign nothing.
pub fn published_references(output: &str) -> Result<Vec<String>, String> {
    let mut references = Vec::new();
    for document in serde_json::Deserializer::from_str(output).into_iter::<Value>() {
        let document = document.map_err(|e| format!("not kwctl push's JSON output: {e}"))?;
        let reference =
            document["immutable_ref"].as_str().ok_or(format!("kwctl push printed no immutable_ref: {document}"))?;
        parse_reference(reference)?;
        references.push(reference.to_string());
    }
    Ok(references)
}

/// Signs every published module with `sign_one` and counts them: fails unless `references`
/// names each of `modules` (the last part of each module's repository, e.g. `gang`) exactly
/// once, nothing else, and every signature succeeds. Returns what was signed.
pub fn sign_published(
    references: &[String],
    modules: &[String],
    mut sign_one: impl FnMut(&str) -> Result<(), String>,
) -> Result<Vec<String>, String> {
    let module_of = |reference: &str| -> Result<String, String> {
        let r = parse_reference(reference)?;
        Ok(r.repository.rsplit('/').next().unwrap_or_default().to_string())
    };
    for module in modules {
        let pushed = references.iter().filter(|r| module_of(r).is_ok_and(|m| &m == module)).count();
        if pushed != 1 {
            return Err(format!("module {module} was published {pushed} times, not once: {references:?}"));
        }
    }
    if let Some(other) = references.iter().find(|r| module_of(r).map_or(true, |m| !modules.contains(&m))) {
        return Err(format!("{other} is not one of the project's modules ({})", modules.join(", ")));
    }
    let mut signed = Vec::new();
    for reference in references {
        sign_one(reference).map_err(|e| format!("signing {reference}: {e}"))?;
        signed.push(reference.clone());
    }
    if signed.len() != modules.len() {
        return Err(format!("signed {} of {} modules", signed.len(), modules.len()));
    }
    Ok(signed)
}

/// Signs `reference` keyless with the `cosign` on PATH, once in each of Sigstore's bundle
/// formats (v2, which policy-server 1.35 reads, and v3), as Kubewarden signs its own policies.
pub fn cosign_keyless(reference: &str) -> Result<(), String> {
    let bare = reference.strip_prefix("registry://").unwrap_or(reference);
    for v3 in ["false", "true"] {
        let mut cmd = std::process::Command::new("cosign");
        cmd.args(["sign", "--yes", &format!("--new-bundle-format={v3}"), &format!("--use-signing-config={v3}"), bare]);
        let status = cmd.status().map_err(|e| format!("cannot run cosign: {e}"))?;
        if !status.success() {
            return Err(format!("{cmd:?}: {status}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;

    #[test]
    fn a_sealed_key_opens_with_its_password_only() {
        let dir = std::env::temp_dir().join(format!("gangwarden-sign-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (key_path, pub_path) = generate_key_pair(&dir, b"s3cret").unwrap();
        let pem = std::fs::read_to_string(&key_path).unwrap();
        assert!(pem.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"), "{pem}");
        let key = read_private_key(&key_path, b"s3cret").unwrap();
        let public = std::fs::read_to_string(&pub_path).unwrap();
        assert_eq!(public, public_pem(key.verifying_key()).unwrap());
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        let err = read_private_key(&key_path, b"wrong").unwrap_err();
        assert!(err.ends_with("wrong password (COSIGN_PASSWORD) or a damaged key"), "{err}");
        assert!(generate_key_pair(&dir, b"x").unwrap_err().ends_with("exists: not overwritten"));
        let signature: DerSignature = key.sign(b"payload");
        assert!(key.verifying_key().verify(b"payload", &signature).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn digest(c: char) -> String {
        format!("sha256:{}", c.to_string().repeat(64))
    }

    #[test]
    fn published_references_come_from_kwctl_json_however_it_is_laid_out() {
        let (a, b) = (digest('a'), digest('b'));
        let compact = format!("{{\"immutable_ref\":\"127.0.0.1:5000/p/gang@{a}\"}}\n");
        let pretty = format!("{{\n  \"immutable_ref\": \"127.0.0.1:5000/p/claims@{b}\",\n  \"extra\": 1\n}}\n\n");
        assert_eq!(
            published_references(&(compact + &pretty)).unwrap(),
            [format!("127.0.0.1:5000/p/gang@{a}"), format!("127.0.0.1:5000/p/claims@{b}")]
        );
        assert_eq!(published_references("").unwrap(), Vec::<String>::new());
        let err = published_references("kwctl push policy.wasm\n").unwrap_err();
        assert!(err.starts_with("not kwctl push's JSON output: "), "{err}");
        assert_eq!(
            published_references("{\"ref\":\"x\"}").unwrap_err(),
            "kwctl push printed no immutable_ref: {\"ref\":\"x\"}"
        );
        assert!(published_references("{\"immutable_ref\":\"127.0.0.1:5000/p/gang:v1\"}").is_err());
    }

    #[test]
    fn every_published_module_is_signed_or_the_release_fails() {
        let modules: Vec<String> = ["gang", "claims"].map(String::from).to_vec();
        let gang = format!("registry://127.0.0.1:5000/p/gang@{}", digest('a'));
        let claims = format!("127.0.0.1:5000/p/claims@{}", digest('b'));
        let mut seen = Vec::new();
        let signed = sign_published(&[gang.clone(), claims.clone()], &modules, |r| {
            seen.push(r.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!((signed.len(), &seen), (2, &vec![gang.clone(), claims.clone()]));
        // A module not published, published twice, or a reference that is not a module.
        let never = |_: &str| -> Result<(), String> { panic!("nothing is signed when the list is wrong") };
        let err = sign_published(std::slice::from_ref(&gang), &modules, never).unwrap_err();
        assert!(err.starts_with("module claims was published 0 times, not once"), "{err}");
        let err = sign_published(&[gang.clone(), gang.clone(), claims.clone()], &modules, never).unwrap_err();
        assert!(err.starts_with("module gang was published 2 times, not once"), "{err}");
        let stray = format!("127.0.0.1:5000/p/other@{}", digest('c'));
        let err = sign_published(&[gang.clone(), claims.clone(), stray.clone()], &modules, never).unwrap_err();
        assert_eq!(err, format!("{stray} is not one of the project's modules (gang, claims)"));
        // A signature that fails fails the whole step.
        let err = sign_published(&[gang.clone(), claims.clone()], &modules, |r| {
            if r == claims { Err("HTTP 500".into()) } else { Ok(()) }
        })
        .unwrap_err();
        assert_eq!(err, format!("signing {claims}: HTTP 500"));
    }

    #[test]
    fn references_need_a_digest() {
        let reference = format!("registry://127.0.0.1:5000/gangwarden/policies/gang@sha256:{}", "a".repeat(64));
        let r = parse_reference(&reference).unwrap();
        assert_eq!((r.registry, r.repository), ("127.0.0.1:5000", "gangwarden/policies/gang"));
        assert!(parse_reference("127.0.0.1:5000/gangwarden/policies/gang:v0.1.0").is_err());
    }
}
