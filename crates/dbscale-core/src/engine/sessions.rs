//! The sessions a thread's clients hold, each with its server's cancel key, for the hard stop:
//! a run that abandons its transactions (a second Ctrl-C, or the grace after the time limit)
//! asks each server to cancel what those sessions run, so a long statement (an analytic query)
//! does not go on working the server for hours after dbscale stopped waiting for it. Kept as
//! sessions open and close, never per transaction. Clients sharing pooled connections are not
//! tracked: their connections go back to the pool between transactions.

use std::cell::RefCell;
use std::collections::HashMap;

use super::nodes::Nodes;
use crate::driver::{CancelKey, Connection};
use crate::workload::loading::join_all;

#[derive(Default)]
pub struct OpenSessions(RefCell<HashMap<u32, (usize, CancelKey)>>);

impl OpenSessions {
    /// Client `client` holds `conn` on `node` from now on.
    pub fn opened(&self, client: u32, node: usize, conn: &Connection) {
        if let Some(key) = conn.cancel_key() {
            self.0.borrow_mut().insert(client, (node, key));
        }
    }

    /// Client `client` no longer holds a session.
    pub fn closed(&self, client: u32) {
        self.0.borrow_mut().remove(&client);
    }

    /// Asks every node to cancel what the sessions still held run, all at once, each within
    /// the driver's cancel limit. A session that is idle, or already gone, is left as it is.
    pub async fn cancel_all(&self, nodes: &Nodes) {
        let held: Vec<(usize, CancelKey)> = self.0.borrow_mut().drain().map(|(_, s)| s).collect();
        join_all(
            held.into_iter()
                .map(|(node, key)| nodes.cancel(node, key))
                .collect(),
        )
        .await;
    }
}
