//! A MySQL or MariaDB target of one host or several: `mysql://u@h1:3306,h2:3307/db` lists a
//! server and its failover candidates, as MySQL's own connectors read a host list. Each
//! connection takes the first host, in order (a random order with `load_balance_hosts=random`),
//! that accepts it. Several full URLs joined by commas are a cluster's nodes instead.

use rand::seq::SliceRandom;

use super::{MySqlConfig, MySqlConnection};
use crate::driver::{ConnectFailure, DbError, QueryProtocol, TlsMode};

#[derive(Debug, Clone)]
pub struct MySqlTarget {
    hosts: Vec<MySqlConfig>,
    random_order: bool,
    /// The URL as given, its password removed, for a target of several hosts.
    listed: Option<String>,
}

impl MySqlTarget {
    pub fn parse(url: &str, tls: Option<TlsMode>) -> Result<Self, DbError> {
        let (url, random_order) = take_load_balance(url)?;
        let Some((scheme, rest)) = url.split_once("://") else {
            return Ok(Self::one(MySqlConfig::parse(&url, tls)?));
        };
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (userinfo, hostlist) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        if !hostlist.contains(',') {
            let mut target = Self::one(MySqlConfig::parse(&url, tls)?);
            target.random_order = random_order;
            return Ok(target);
        }
        let user = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
        let hosts = hostlist
            .split(',')
            .map(|host| MySqlConfig::parse(&format!("{scheme}://{user}{host}{tail}"), tls))
            .collect::<Result<Vec<_>, _>>()?;
        let first = hosts[0].redacted();
        let listed = first.split_once("://").and_then(|(s, rest)| {
            let at = rest.find('@')?;
            let end = rest[at..].find(['/', '?']).map_or(rest.len(), |i| at + i);
            let named: Vec<String> = hosts.iter().map(host_port).collect();
            let params = if random_order {
                "load_balance_hosts=random"
            } else {
                ""
            };
            let joined = format!("{s}://{}@{}{}", &rest[..at], named.join(","), &rest[end..]);
            Some(match (params.is_empty(), joined.contains('?')) {
                (true, _) => joined,
                (false, true) => format!("{joined}&{params}"),
                (false, false) => format!("{joined}?{params}"),
            })
        });
        Ok(MySqlTarget {
            hosts,
            random_order,
            listed,
        })
    }

    fn one(config: MySqlConfig) -> Self {
        MySqlTarget {
            hosts: vec![config],
            random_order: false,
            listed: None,
        }
    }

    pub fn first(&self) -> &MySqlConfig {
        &self.hosts[0]
    }

    pub fn host_labels(&self) -> Vec<String> {
        self.hosts.iter().map(MySqlConfig::redacted).collect()
    }

    pub fn redacted(&self) -> String {
        self.listed
            .clone()
            .unwrap_or_else(|| self.hosts[0].redacted())
    }

    /// A session on the first host, in order, that takes it; with none, each host's reason.
    pub async fn connect(
        &self,
        protocol: QueryProtocol,
    ) -> Result<(MySqlConnection, usize), DbError> {
        if self.hosts.len() == 1 {
            return Ok((MySqlConnection::connect(&self.hosts[0], protocol).await?, 0));
        }
        let mut order: Vec<usize> = (0..self.hosts.len()).collect();
        if self.random_order {
            order.shuffle(&mut rand::thread_rng());
        }
        let mut reasons = Vec::new();
        let mut failure = ConnectFailure::Unreachable;
        for i in order {
            match MySqlConnection::connect(&self.hosts[i], protocol).await {
                Ok(connection) => return Ok((connection, i)),
                Err(error) => {
                    failure = error.connect.unwrap_or(failure);
                    reasons.push(format!("{}: {}", self.hosts[i].redacted(), error.message));
                }
            }
        }
        Err(DbError::connect(
            failure,
            format!("no host took the connection ({})", reasons.join("; ")),
        ))
    }
}

fn host_port(config: &MySqlConfig) -> String {
    let redacted = config.redacted();
    let after = redacted.split_once('@').map_or("", |(_, h)| h);
    after.split(['/', '?']).next().unwrap_or(after).to_string()
}

/// `load_balance_hosts=random|disable` taken out of the URL's query (MySqlConfig does not know
/// it): the URL without it, and whether the order is random.
fn take_load_balance(url: &str) -> Result<(String, bool), DbError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), false));
    };
    let mut random = false;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("load_balance_hosts", "random")) => random = true,
            Some(("load_balance_hosts", "disable")) => random = false,
            Some(("load_balance_hosts", other)) => {
                return Err(DbError::invalid_target(format!(
                    "invalid load_balance_hosts value: \"{other}\" (disable or random)"
                )))
            }
            _ => kept.push(pair),
        }
    }
    Ok(match kept.is_empty() {
        true => (base.to_string(), random),
        false => (format!("{base}?{}", kept.join("&")), random),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_list_is_failover_candidates() {
        let t = MySqlTarget::parse(
            "mysql://root:pw@h1:3306,h2:3307/db?connect_timeout=2&load_balance_hosts=random",
            None,
        )
        .unwrap();
        assert_eq!(
            t.host_labels(),
            ["mysql://root@h1:3306/db", "mysql://root@h2:3307/db"]
        );
        assert!(t.random_order);
        assert!(!t.redacted().contains("pw"), "{}", t.redacted());
        assert!(t.redacted().starts_with("mysql://root@h1:3306,h2:3307/db"));
        let single = MySqlTarget::parse("mysql://root@h1/db", None).unwrap();
        assert_eq!(single.host_labels(), ["mysql://root@h1:3306/db"]);
        assert!(MySqlTarget::parse("mysql://r@h1,h2/db?load_balance_hosts=x", None).is_err());
    }
}
