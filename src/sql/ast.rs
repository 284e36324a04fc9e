//! Flink statements. Queries and expressions are `sqlparser` ASTs; what `sqlparser` has no
//! node for (Flink DDL, `SET`/`RESET`, `DESC`, …) is ours.

use sqlparser::ast::{Expr, ObjectName, Query};

use crate::types::DataType;

/// A position in the script (1-based line and column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

// Built once per statement or column, never on a hot path: boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Statement {
    CreateTable(CreateTable),
    /// `CREATE TABLE t WITH (…) AS SELECT …`: the table takes the query's columns, and an
    /// INSERT job fills it.
    CreateTableAs {
        table: CreateTable,
        query: Box<Query>,
    },
    CreateView(CreateView),
    /// `CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'class' [LANGUAGE …]
    /// [USING JAR …]`: a function from a JVM (or Python) class.
    CreateFunction {
        name: ObjectName,
        class: String,
        /// `JAVA` unless written.
        language: String,
        system: bool,
        if_not_exists: bool,
    },
    Drop(Drop),
    /// `SET 'key' = 'value'`, or `SET` alone (key `None`) to list the options.
    Set {
        key: Option<String>,
        value: Option<String>,
    },
    /// `RESET 'key'`, or `RESET` alone for all keys.
    Reset {
        key: Option<String>,
    },
    /// `SHOW TABLES [FROM|IN [catalog.]database] [[NOT] LIKE '…']`; `database` is the name
    /// written after FROM/IN, checked against the session's one database when run.
    ShowTables {
        database: Option<ObjectName>,
        like: Option<ShowLike>,
    },
    /// `SHOW VIEWS`, with the same optional parts as `SHOW TABLES`.
    ShowViews {
        database: Option<ObjectName>,
        like: Option<ShowLike>,
    },
    /// `SHOW [USER] FUNCTIONS [[NOT] LIKE '…']`: the built-ins and the functions a program
    /// registered (`USER`: those only).
    ShowFunctions {
        user_only: bool,
        database: Option<ObjectName>,
        like: Option<ShowLike>,
    },
    /// `SHOW CATALOGS`, `SHOW DATABASES`, `SHOW CURRENT CATALOG|DATABASE`: a one-column,
    /// one-row answer (the session has Flink's default catalog and database only).
    ShowSingle {
        header: &'static str,
        value: &'static str,
        /// The catalog of `SHOW DATABASES FROM|IN catalog`.
        scope: Option<ObjectName>,
        like: Option<ShowLike>,
    },
    /// `SHOW [FULL] MODULES`, `SHOW JARS`, `SHOW MATERIALIZED TABLES`: answers fixed by the
    /// session (Flink's `core` module, no jars, no materialized tables).
    ShowFixed {
        header: &'static [&'static str],
        rows: &'static [&'static [&'static str]],
    },
    ShowCreateTable(ObjectName),
    ShowCreateView(ObjectName),
    /// `DESC t`, or `SHOW COLUMNS FROM|IN t [[NOT] LIKE '…']` (the same table, filtered).
    Describe {
        name: ObjectName,
        like: Option<ShowLike>,
    },
    /// `EXPLAIN [CHANGELOG_MODE] stmt`; `changelog_mode` adds each node's changelog mode.
    /// `EXECUTE STATEMENT SET BEGIN INSERT …; INSERT …; END`: the INSERTs as one job.
    StatementSet(Vec<Insert>),
    /// The SQL client's `BEGIN STATEMENT SET`: the INSERTs that follow are gathered until
    /// `END` submits them as one job.
    BeginStatementSet,
    /// `END` of a `BEGIN STATEMENT SET`.
    EndStatementSet,
    Explain {
        statement: Box<Statement>,
        changelog_mode: bool,
    },
    /// `ALTER TABLE [IF EXISTS] t RENAME TO u | SET (…) | RESET (…)`.
    AlterTable {
        name: ObjectName,
        if_exists: bool,
        action: AlterTableAction,
    },
    /// `ALTER VIEW v AS query`: the view's query replaced (its comment kept).
    AlterViewAs {
        name: ObjectName,
        query: Box<Query>,
    },
    /// `ALTER VIEW v RENAME TO w`.
    AlterViewRename {
        name: ObjectName,
        new_name: ObjectName,
    },
    /// `USE db`, `USE CATALOG c`: the session has Flink's default catalog and database only,
    /// so these only check the name.
    Use {
        catalog: bool,
        name: ObjectName,
    },
    Query(Box<Query>),
    Insert(Insert),
    /// `SHOW JOBS`: the session's jobs.
    ShowJobs,
    /// `DESCRIBE JOB '<id>'`: one job of the session, as `SHOW JOBS` lists it.
    DescribeJob(String),
    /// `STOP JOB '<id>' [WITH SAVEPOINT [WITH DRAIN]]`.
    StopJob {
        id: String,
        savepoint: bool,
        drain: bool,
    },
}

#[derive(Debug, Clone)]
pub enum AlterTableAction {
    RenameTo(ObjectName),
    /// `SET ('k' = 'v', …)`: options added or replaced.
    SetOptions(Vec<(String, String)>),
    /// `RESET ('k', …)`: options removed.
    ResetOptions(Vec<String>),
    /// `ADD c T` / `ADD (…)`: columns appended.
    AddColumns(Vec<ColumnDef>),
    /// `MODIFY c T` / `MODIFY (…)`: columns redefined in place.
    ModifyColumns(Vec<ColumnDef>),
    /// `DROP c` / `DROP (c, …)`.
    DropColumns(Vec<String>),
    /// `RENAME c TO d`.
    RenameColumn {
        from: String,
        to: String,
    },
}

/// The `[NOT] LIKE 'pattern'` filter of a `SHOW` statement: SQL LIKE on the listed names,
/// with `\` as the escape character (as Flink's `SHOW … LIKE` has it); `ILIKE` ignores case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowLike {
    pub negated: bool,
    pub case_insensitive: bool,
    pub pattern: String,
}

#[derive(Debug, Clone)]
pub struct CreateTable {
    pub name: ObjectName,
    pub temporary: bool,
    pub if_not_exists: bool,
    pub columns: Vec<ColumnDef>,
    pub watermark: Option<WatermarkDef>,
    pub primary_key: Option<Vec<String>>,
    /// Where each primary key column is named, for errors about it.
    pub primary_key_at: Vec<Position>,
    pub comment: Option<String>,
    /// `PARTITIONED BY (k, …)`, in the order written.
    pub partition_keys: Vec<String>,
    pub options: Vec<(String, String)>,
    /// `LIKE source [(…)]`: the source table's parts merged under these.
    pub like: Option<TableLike>,
}

impl CreateTable {
    /// A `CREATE TABLE` with nothing in it yet, for the parser to fill.
    pub fn named(name: ObjectName, temporary: bool, if_not_exists: bool) -> Self {
        CreateTable {
            name,
            temporary,
            if_not_exists,
            columns: Vec::new(),
            watermark: None,
            primary_key: None,
            primary_key_at: Vec::new(),
            comment: None,
            partition_keys: Vec::new(),
            options: Vec::new(),
            like: None,
        }
    }
}

/// `LIKE source (INCLUDING ALL OVERWRITING OPTIONS …)`; options apply in order.
#[derive(Debug, Clone)]
pub struct TableLike {
    pub source: ObjectName,
    pub options: Vec<(LikeMode, LikePart)>,
    pub position: Position,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LikeMode {
    Including,
    Excluding,
    Overwriting,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LikePart {
    All,
    Constraints,
    Generated,
    Metadata,
    Options,
    Partitions,
    Watermarks,
}

#[derive(Debug, Clone)]
pub struct ColumnDef {
    pub name: String,
    pub kind: ColumnKind,
    pub comment: Option<String>,
    pub position: Position,
}

// Built once per statement or column, never on a hot path: boxing would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum ColumnKind {
    Physical(DataType),
    /// `name AS expr`
    Computed(Expr),
    /// `name type METADATA [FROM 'key'] [VIRTUAL]`
    Metadata {
        data_type: DataType,
        key: Option<String>,
        is_virtual: bool,
    },
}

#[derive(Debug, Clone)]
pub struct WatermarkDef {
    pub column: String,
    pub expr: Expr,
    pub position: Position,
}

#[derive(Debug, Clone)]
pub struct CreateView {
    pub name: ObjectName,
    pub temporary: bool,
    pub if_not_exists: bool,
    pub columns: Vec<String>,
    /// `COMMENT '…'` between the column list and `AS`.
    pub comment: Option<String>,
    pub query: Box<Query>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Table,
    View,
}

#[derive(Debug, Clone)]
pub struct Drop {
    pub kind: ObjectKind,
    pub name: ObjectName,
    pub temporary: bool,
    pub if_exists: bool,
}

#[derive(Debug, Clone)]
pub struct Insert {
    pub table: ObjectName,
    /// `PARTITION (k = 'v', …)`: each key with its literal's text.
    pub static_partitions: Vec<(String, String)>,
    pub columns: Vec<String>,
    pub overwrite: bool,
    pub query: Box<Query>,
}

/// A `/*+ NAME(...) */` hint written after a table reference.
#[derive(Debug, Clone, PartialEq)]
pub struct TableHint {
    pub name: String,
    /// `OPTIONS('k'='v', …)` pairs; other hints keep their raw arguments as keys.
    pub options: Vec<(String, String)>,
    /// Where the hint comment starts.
    pub position: Position,
    /// Where the token before the comment ends: the binder attaches the hint to the table
    /// name that ends there.
    pub follows: Position,
}

/// A parsed statement with the hints found in it.
#[derive(Debug, Clone)]
pub struct ParsedStatement {
    pub statement: Statement,
    pub hints: Vec<TableHint>,
    pub position: Position,
}
