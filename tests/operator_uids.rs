//! Operator uids (docs/design/0008-checkpoints.md, section 3): the same SQL gets the same uids
//! in another session and at another parallelism; a change below a node changes its uid, a
//! change above it does not.

use tideline::client::{Session, run_script};
use tideline::plan::stream::uid::{NodeUid, operator_uids};
use tideline::sql::parser::parse_statement;
use tideline::sql::split::split_statements;

const TABLES: &str = "
CREATE TABLE clicks (user_name STRING, url STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE other (user_name STRING, url STRING, ts TIMESTAMP(3))
WITH ('connector' = 'datagen', 'number-of-rows' = '5', 'rows-per-second' = '7');
";

fn uids(setup: &str, query: &str) -> Vec<NodeUid> {
    let mut session = Session::default();
    assert!(run_script(&mut session, setup, &mut std::io::sink()));
    let (statements, _) = split_statements(query);
    let parsed = parse_statement(&statements[0]).unwrap();
    operator_uids(&session.stream_plan(&parsed).unwrap())
}

fn uid_of<'a>(nodes: &'a [NodeUid], prefix: &str) -> &'a NodeUid {
    nodes
        .iter()
        .find(|n| n.line.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} in {nodes:#?}"))
}

const COUNT: &str =
    "SELECT user_name, COUNT(*) FROM clicks WHERE url LIKE '%cart%' GROUP BY user_name";

#[test]
fn the_same_query_gets_the_same_uids_in_another_session_and_parallelism() {
    let first = uids(TABLES, COUNT);
    let again = uids(TABLES, COUNT);
    let parallel = uids(&format!("SET 'parallelism.default' = '2';{TABLES}"), COUNT);
    assert_eq!(first, again);
    assert_eq!(first, parallel);
    // Table options are not in any uid.
    let options = uids(
        &TABLES.replace("'number-of-rows' = '10'", "'number-of-rows' = '99'"),
        COUNT,
    );
    assert_eq!(first, options);
    let mut all: Vec<_> = first.iter().map(|n| n.uid).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), first.len(), "every node has its own uid");
}

#[test]
fn a_change_below_a_node_changes_its_uid_and_one_above_does_not() {
    let first = uids(TABLES, COUNT);
    let other_filter = uids(TABLES, &COUNT.replace("%cart%", "%shop%"));
    assert_ne!(
        uid_of(&first, "GroupAggregate").uid,
        uid_of(&other_filter, "GroupAggregate").uid
    );
    // Another projection above the aggregate leaves it alone (an alias is the aggregate's
    // own, as its EXPLAIN line shows).
    let inner = "(SELECT user_name, COUNT(*) AS c FROM clicks WHERE url LIKE '%cart%' \
                 GROUP BY user_name)";
    let plain = uids(TABLES, &format!("SELECT user_name, c FROM {inner}"));
    let above = uids(
        TABLES,
        &format!("SELECT UPPER(user_name), c + 1 FROM {inner}"),
    );
    assert_eq!(
        uid_of(&plain, "GroupAggregate").uid,
        uid_of(&above, "GroupAggregate").uid
    );
    assert_ne!(plain.last().unwrap().uid, above.last().unwrap().uid);
}

#[test]
fn two_scans_of_one_table_have_their_own_uids() {
    let nodes = uids(
        TABLES,
        "SELECT user_name FROM clicks UNION ALL SELECT user_name FROM clicks",
    );
    let scans: Vec<_> = nodes
        .iter()
        .filter(|n| n.line.starts_with("TableSourceScan"))
        .collect();
    assert_eq!(scans.len(), 2);
    assert_ne!(scans[0].uid, scans[1].uid);
    assert_eq!(scans[0].line, scans[1].line);
}
