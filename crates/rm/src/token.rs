//! Container tokens and AM tokens.
//!
//! A container token is the secret the RM hands, with each container it
//! allocates, to the container's node (heartbeat answer) and to its AM
//! (allocate answer), so that the node starts a container only for a caller
//! who shows the same secret, that is its AM (docs/api.md, "Launching
//! containers"). An AM token (YARN's AMRMToken) is the secret of one
//! application attempt, which every call of the AM protocol must show: the
//! RM hands it to the AM container's node with the container, or to an
//! unmanaged AM's owner in the app's report (docs/api.md, "AM tokens").
//!
//! This module owns the token values (128 bits from the operating system's
//! random source, lowercase hex on the wire), drawing them in batches, the
//! constant-time comparisons, and the actor's ledger of container tokens
//! not yet handed to both parties. Which answer carries which token, and
//! which attempt's AM token is in force, is the actor's business; refusing
//! a start call is the node agent's (weft-nm). Tokens never enter
//! weft-core: the scheduler stays deterministic.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use weft_model::{AppId, AttemptId, ContainerId};

/// Bytes in a token (128 bits).
const TOKEN_BYTES: usize = 16;

/// Tokens drawn from the operating system per call (1 KiB), so a burst of
/// allocations costs one system call per this many containers.
const BATCH: usize = 64;

/// An unguessable secret for one container. Comparisons (`==`, `matches`)
/// take the same time whatever the contents, and `Debug` does not show the
/// value, so it cannot leak through a log line by accident.
#[derive(Clone)]
pub struct ContainerToken([u8; TOKEN_BYTES]);

/// Why a token could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The operating system's random source failed.
    #[error("the operating system's random source failed: {0}")]
    Random(getrandom::Error),
    /// A token on the wire is not 32 lowercase hex digits.
    #[error("a container token is 32 lowercase hex digits; got {len} characters that are not")]
    Malformed {
        /// Its length (the value itself is never repeated).
        len: usize,
    },
}

impl ContainerToken {
    /// The wire form: 32 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        self.hex_digits().iter().map(|&b| b as char).collect()
    }

    /// The wire form's bytes, on the stack: a comparison on the hot path
    /// (every AM call) allocates nothing.
    fn hex_digits(&self) -> [u8; 2 * TOKEN_BYTES] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 2 * TOKEN_BYTES];
        for (i, b) in self.0.iter().enumerate() {
            out[2 * i] = DIGITS[usize::from(b >> 4)];
            out[2 * i + 1] = DIGITS[usize::from(b & 0xf)];
        }
        out
    }

    /// Reads the wire form.
    pub fn from_hex(text: &str) -> Result<ContainerToken, TokenError> {
        let malformed = || TokenError::Malformed { len: text.len() };
        let bytes = text.as_bytes();
        if bytes.len() != 2 * TOKEN_BYTES {
            return Err(malformed());
        }
        let digit = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let mut out = [0u8; TOKEN_BYTES];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            let (Some(hi), Some(lo)) = (digit(pair[0]), digit(pair[1])) else {
                return Err(malformed());
            };
            out[i] = hi << 4 | lo;
        }
        Ok(ContainerToken(out))
    }

    /// Whether `presented` (as a caller sent it) is this token's wire form,
    /// in time that depends only on its length (which is public: always 32).
    pub fn matches(&self, presented: &str) -> bool {
        constant_time_eq(&self.hex_digits(), presented.as_bytes())
    }
}

/// Equal-length slices are compared by folding every byte's difference into
/// one accumulator, with no early exit; the length is not secret.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // Keeps the optimiser from turning the fold back into a short-circuit.
    std::hint::black_box(diff) == 0
}

impl PartialEq for ContainerToken {
    fn eq(&self, other: &ContainerToken) -> bool {
        constant_time_eq(&self.0, &other.0)
    }
}

impl Eq for ContainerToken {}

impl fmt::Debug for ContainerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContainerToken(..)")
    }
}

impl Serialize for ContainerToken {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for ContainerToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ContainerToken, D::Error> {
        let text = String::deserialize(d)?;
        ContainerToken::from_hex(&text).map_err(serde::de::Error::custom)
    }
}

/// The secret of one application attempt (YARN's AMRMToken): every call of
/// the AM protocol for the app must show it, and a new attempt gets a new
/// one. Like a container token it compares in constant time and never shows
/// its value in `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct AmToken(ContainerToken);

impl AmToken {
    /// The wire form: 32 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        self.0.to_hex()
    }

    /// Reads the wire form.
    pub fn from_hex(text: &str) -> Result<AmToken, TokenError> {
        ContainerToken::from_hex(text).map(AmToken)
    }

    /// Whether `presented` is this token's wire form, in time that depends
    /// only on its length.
    pub fn matches(&self, presented: &str) -> bool {
        self.0.matches(presented)
    }
}

impl fmt::Debug for AmToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AmToken(..)")
    }
}

impl Serialize for AmToken {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for AmToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AmToken, D::Error> {
        ContainerToken::deserialize(d).map(AmToken)
    }
}

/// An attempt's AM token with the attempt it belongs to: a token is only
/// ever good for its own attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptToken {
    /// The attempt.
    pub attempt: AttemptId,
    /// Its token.
    pub token: AmToken,
}

/// Tokens from the operating system's random source, drawn `BATCH` at a time.
pub(crate) struct TokenSource {
    batch: Box<[u8; TOKEN_BYTES * BATCH]>,
    /// Tokens of `batch` already handed out.
    used: usize,
}

impl TokenSource {
    /// A source with its first batch drawn, so a random source that does
    /// not work stops the RM at start rather than at the first allocation.
    pub(crate) fn new() -> Result<TokenSource, TokenError> {
        let mut source = TokenSource {
            batch: Box::new([0; TOKEN_BYTES * BATCH]),
            used: BATCH,
        };
        source.refill()?;
        Ok(source)
    }

    fn refill(&mut self) -> Result<(), TokenError> {
        getrandom::fill(&mut self.batch[..]).map_err(TokenError::Random)?;
        self.used = 0;
        Ok(())
    }

    /// A fresh token. Each batch byte is handed out once.
    pub(crate) fn draw(&mut self) -> ContainerToken {
        if self.used == BATCH {
            // getrandom(2) cannot fail once it has succeeded (the pool is
            // initialised for good), and it succeeded in `new`. Should it
            // fail anyway, stopping the scheduler is the safe way out:
            // handing out guessable tokens is not.
            self.refill()
                .unwrap_or_else(|e| panic!("cannot draw container tokens: {e}"));
        }
        let start = self.used * TOKEN_BYTES;
        let mut token = [0u8; TOKEN_BYTES];
        token.copy_from_slice(&self.batch[start..start + TOKEN_BYTES]);
        // Not kept after use: the batch holds only tokens still to come.
        self.batch[start..start + TOKEN_BYTES].fill(0);
        self.used += 1;
        ContainerToken(token)
    }

    /// A fresh AM token, from the same source: the two kinds never share a
    /// value, since each drawn value is handed out once.
    pub(crate) fn draw_am(&mut self) -> AmToken {
        AmToken(self.draw())
    }
}

/// Who still has to be handed a container's token.
struct Owed {
    token: ContainerToken,
    node: bool,
    am: bool,
}

/// The tokens of allocated containers not yet handed to both their node and
/// their AM.
///
/// Why it cannot grow without bound: an entry is made only when the core
/// allocates a container, and leaves when it has been handed to both
/// parties, when the container ends, or when its app ends. The core reports
/// every end of a container (released, preempted, killed, lost with its
/// node, its app's end, a node re-registering without it), so every entry
/// belongs to a live container: the ledger is never larger than the
/// cluster's live containers, which the cluster's capacity bounds.
#[derive(Default)]
pub(crate) struct TokenLedger {
    owed: BTreeMap<ContainerId, Owed>,
}

impl TokenLedger {
    /// A container the core just allocated. Its AM never receives an AM
    /// container (the node launches it), so only the node is owed that one.
    pub(crate) fn allocated(&mut self, container: ContainerId, is_am: bool, token: ContainerToken) {
        self.owed.insert(
            container,
            Owed {
                token,
                node: true,
                am: !is_am,
            },
        );
    }

    /// The token for the node's heartbeat answer, or `None` when the
    /// container has already ended (the core may still list a container
    /// that ended before its node heard of it).
    pub(crate) fn for_node(&mut self, container: ContainerId) -> Option<ContainerToken> {
        self.hand_out(container, |o| &mut o.node)
    }

    /// The token for the AM's allocate answer, or `None` when the container
    /// has already ended.
    pub(crate) fn for_am(&mut self, container: ContainerId) -> Option<ContainerToken> {
        self.hand_out(container, |o| &mut o.am)
    }

    fn hand_out(
        &mut self,
        container: ContainerId,
        owed_to: impl Fn(&mut Owed) -> &mut bool,
    ) -> Option<ContainerToken> {
        let owed = self.owed.get_mut(&container)?;
        *owed_to(owed) = false;
        let token = owed.token.clone();
        if !owed.node && !owed.am {
            self.owed.remove(&container);
        }
        Some(token)
    }

    /// A container ended: nobody will start it, so nobody needs its token.
    pub(crate) fn ended(&mut self, container: ContainerId) {
        self.owed.remove(&container);
    }

    /// An app ended (its containers' ends are reported too; this is the
    /// belt to their braces).
    pub(crate) fn app_ended(&mut self, app: AppId) {
        self.owed.retain(|c, _| c.app() != app);
    }

    /// Tokens still owed to someone.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.owed.len()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;
    use weft_model::AttemptId;

    use super::*;

    fn container(app: u32, seq: u64) -> ContainerId {
        ContainerId::new(AttemptId::new(AppId::new(1, app), 1), seq)
    }

    #[test]
    fn tokens_are_distinct_and_read_back_from_hex() {
        let mut source = TokenSource::new().unwrap();
        // More than a batch, so a refill is crossed.
        let tokens: Vec<String> = (0..3 * BATCH).map(|_| source.draw().to_hex()).collect();
        let distinct: BTreeSet<&String> = tokens.iter().collect();
        assert_eq!(distinct.len(), tokens.len());
        for t in &tokens {
            assert_eq!(t.len(), 32);
            let back = ContainerToken::from_hex(t).unwrap();
            assert_eq!(&back.to_hex(), t);
            assert!(back.matches(t));
        }
        assert_eq!(format!("{:?}", source.draw()), "ContainerToken(..)");
    }

    #[test]
    fn only_the_exact_wire_form_matches() {
        let token = ContainerToken::from_hex("00112233445566778899aabbccddeeff").unwrap();
        assert!(token.matches("00112233445566778899aabbccddeeff"));
        for wrong in [
            "",
            "00112233445566778899aabbccddeefe",
            "00112233445566778899AABBCCDDEEFF",
            "00112233445566778899aabbccddeeff00",
            "00112233445566778899aabbccddeef",
        ] {
            assert!(!token.matches(wrong), "{wrong:?}");
        }
        for bad in [
            "xyz",
            "00112233445566778899AABBCCDDEEFF",
            "0011223344556677 899aabbccddeeff",
        ] {
            let e = ContainerToken::from_hex(bad).unwrap_err().to_string();
            assert!(!e.contains(bad), "the value is echoed: {e}");
        }
        let json = serde_json::to_string(&token).unwrap();
        assert_eq!(json, r#""00112233445566778899aabbccddeeff""#);
        assert_eq!(
            serde_json::from_str::<ContainerToken>(&json).unwrap(),
            token
        );
        assert!(serde_json::from_str::<ContainerToken>(r#""00""#).is_err());
    }

    #[test]
    fn am_tokens_hide_their_value_and_match_only_their_wire_form() {
        let mut source = TokenSource::new().unwrap();
        let (a, b) = (source.draw_am(), source.draw_am());
        assert_ne!(a, b);
        assert!(a.matches(&a.to_hex()));
        assert!(!a.matches(&b.to_hex()));
        assert!(!a.matches(&a.to_hex().to_uppercase()));
        assert!(!a.matches(""));
        assert_eq!(format!("{a:?}"), "AmToken(..)");
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<AmToken>(&json).unwrap(), a);
        assert_eq!(AmToken::from_hex(&a.to_hex()).unwrap(), a);
    }

    #[test]
    fn a_token_is_kept_until_both_sides_have_it() {
        let mut source = TokenSource::new().unwrap();
        let mut ledger = TokenLedger::default();
        let (c, am) = (container(1, 2), container(1, 1));
        let token = source.draw();
        ledger.allocated(c, false, token.clone());
        ledger.allocated(am, true, source.draw());
        assert_eq!(ledger.len(), 2);
        assert_eq!(ledger.for_am(c), Some(token.clone()));
        // Still owed to the node.
        assert_eq!(ledger.len(), 2);
        assert_eq!(ledger.for_node(c), Some(token));
        assert_eq!(ledger.len(), 1);
        // The AM container is owed to its node only.
        assert!(ledger.for_node(am).is_some());
        assert_eq!(ledger.len(), 0);
        assert_eq!(ledger.for_node(c), None);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Allocate { app: u32, is_am: bool },
        ToNode(usize),
        ToAm(usize),
        End(usize),
        AppEnds(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1..4u32, any::<bool>()).prop_map(|(app, is_am)| Op::Allocate { app, is_am }),
            any::<usize>().prop_map(Op::ToNode),
            any::<usize>().prop_map(Op::ToAm),
            any::<usize>().prop_map(Op::End),
            (1..4u32).prop_map(Op::AppEnds),
        ]
    }

    proptest! {
        /// Whatever happens, the ledger holds only live containers still
        /// owed to someone: it is never larger than the live containers.
        #[test]
        fn the_ledger_holds_only_live_containers_still_owed(ops in prop::collection::vec(op(), 1..200)) {
            let mut source = TokenSource::new().unwrap();
            let mut ledger = TokenLedger::default();
            // The model: live containers and who is still owed their token.
            let mut live: BTreeMap<ContainerId, (bool, bool)> = BTreeMap::new();
            let mut seq = 0;
            for op in ops {
                let pick = |i: usize| live.keys().nth(i % live.len().max(1)).copied();
                match op {
                    Op::Allocate { app, is_am } => {
                        seq += 1;
                        let c = container(app, seq);
                        ledger.allocated(c, is_am, source.draw());
                        live.insert(c, (true, !is_am));
                    }
                    Op::ToNode(i) => if let Some(c) = pick(i) {
                        let (node, am) = live[&c];
                        prop_assert_eq!(ledger.for_node(c).is_some(), node || am);
                        live.get_mut(&c).unwrap().0 = false;
                    },
                    Op::ToAm(i) => if let Some(c) = pick(i) {
                        let (node, am) = live[&c];
                        prop_assert_eq!(ledger.for_am(c).is_some(), node || am);
                        live.get_mut(&c).unwrap().1 = false;
                    },
                    Op::End(i) => if let Some(c) = pick(i) {
                        ledger.ended(c);
                        live.remove(&c);
                    },
                    Op::AppEnds(app) => {
                        ledger.app_ended(AppId::new(1, app));
                        live.retain(|c, _| c.app() != AppId::new(1, app));
                    }
                }
                let owed = live.values().filter(|(n, a)| *n || *a).count();
                prop_assert_eq!(ledger.len(), owed);
                prop_assert!(ledger.len() <= live.len());
            }
        }
    }
}
