//! The shares of the server's lasting resources
//! (running tasks, listen streams) each caller may hold ([`Quota`]): so that one caller's tasks
//! or streams cannot take what every other caller needs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub(crate) use crate::context::auth::{Caller, next_connection};

/// A bounded resource shared by the server's callers: at most `total` held at once, and at most
/// `per_caller` by any one caller.
pub(crate) struct Quota {
    what: &'static str,
    total: usize,
    per_caller: usize,
    held: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    total: usize,
    by_caller: HashMap<Caller, usize>,
}

/// Why a share was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The caller holds its share already.
    Caller { limit: usize },
    /// The server holds its limit already.
    Total { limit: usize },
}

impl Quota {
    /// At most `total` of `what` (a plural, for messages), `per_caller` for each caller.
    pub fn new(what: &'static str, total: usize, per_caller: usize) -> Arc<Quota> {
        Arc::new(Quota { what, total, per_caller, held: Mutex::default() })
    }

    /// One share for `caller`, held until the returned guard is dropped.
    pub fn take(self: &Arc<Self>, caller: &Caller) -> Result<Share, Refused> {
        let mut held = self.held.lock().expect("quota lock");
        let mine = held.by_caller.get(caller).copied().unwrap_or(0);
        if mine >= self.per_caller {
            return Err(Refused::Caller { limit: self.per_caller });
        }
        if held.total >= self.total {
            return Err(Refused::Total { limit: self.total });
        }
        held.total += 1;
        *held.by_caller.entry(caller.clone()).or_default() += 1;
        Ok(Share { quota: self.clone(), caller: caller.clone() })
    }

    /// The message of a refusal: what is full, and what to do.
    pub fn refusal(&self, refused: &Refused) -> String {
        let what = self.what;
        match refused {
            Refused::Caller { limit } => format!(
                "too many {what}: this caller already has {limit}, the server's limit per caller; \
                 end some first"
            ),
            Refused::Total { limit } => {
                format!("the server is busy: {limit} {what} are open, its limit; retry later")
            }
        }
    }

    /// How many shares are held, in all and by `caller`.
    #[cfg(test)]
    pub fn held(&self, caller: &Caller) -> (usize, usize) {
        let held = self.held.lock().expect("quota lock");
        (held.total, held.by_caller.get(caller).copied().unwrap_or(0))
    }
}

/// One share of a [`Quota`], given back when dropped.
pub(crate) struct Share {
    quota: Arc<Quota>,
    caller: Caller,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut held = self.quota.held.lock().expect("quota lock");
        held.total -= 1;
        if let Some(mine) = held.by_caller.get_mut(&self.caller) {
            *mine -= 1;
            if *mine == 0 {
                held.by_caller.remove(&self.caller);
            }
        }
    }
}

/// Something held until this guard is dropped, then given back (a place among the server's
/// running requests: [`Shared::hold_place`](super::shared::Shared::hold_place)).
pub(crate) struct Held(Option<Box<dyn FnOnce() + Send + Sync>>);

impl Held {
    /// Held until dropped; then `give_back` runs.
    pub fn new(give_back: impl FnOnce() + Send + Sync + 'static) -> Held {
        Held(Some(Box::new(give_back)))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(give_back) = self.0.take() {
            give_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::*;
    use crate::context::auth::AuthInfo;

    #[test]
    fn shares_are_bounded_per_caller_and_in_all_and_given_back() {
        let quota = Quota::new("streams", 3, 2);
        let (a, b, c) = (Caller::Connection(1), Caller::Connection(2), Caller::Connection(3));
        let a1 = quota.take(&a).unwrap();
        let _a2 = quota.take(&a).unwrap();
        assert_eq!(quota.take(&a).err(), Some(Refused::Caller { limit: 2 }));
        let _b1 = quota.take(&b).unwrap();
        assert_eq!(quota.take(&c).err(), Some(Refused::Total { limit: 3 }));
        drop(a1);
        assert_eq!(quota.held(&a), (2, 1));
        let _c1 = quota.take(&c).unwrap();
        assert!(quota.refusal(&Refused::Caller { limit: 2 }).contains("too many streams"));
    }

    #[test]
    fn identities_keep_subjects_and_clients_apart() {
        let subject = AuthInfo::new("alice");
        let client = AuthInfo::default().client_id("alice");
        assert_ne!(subject.identity_key(), client.identity_key());
        assert_eq!(AuthInfo::default().identity_key(), None);
        let by_identity = Caller::of(Some(&subject), Some(7), None);
        assert_eq!(by_identity, Caller::Identity("sub:alice".into()));
        assert_eq!(Caller::of(Some(&AuthInfo::default()), Some(7), None), Caller::Connection(7));
        let address: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(Caller::of(None, None, Some(address)), Caller::Address(address));
        assert_eq!(Caller::of(None, None, None).owner(), None);
        assert_eq!(Caller::Connection(7).owner().as_deref(), Some("connection:7"));
    }
}
