//! `SHOW` and `DESCRIBE`: listings of the catalog, the functions and the session.

use sqlparser::ast::ObjectName;

use super::{Session, StatementError, StatementResult, position_error};
use crate::catalog::CatalogEntry;
use crate::function::string::like_to_regex;
use crate::sql::ast::{ParsedStatement, ShowLike, Statement};
use crate::sql::parser::{object_name_last, session_object_name};

impl Session {
    /// `SHOW TABLES` and `SHOW VIEWS`, with their `FROM` database and `LIKE`.
    pub(super) fn show_tables(
        &self,
        parsed: &ParsedStatement,
        database: &Option<ObjectName>,
        like: &Option<ShowLike>,
    ) -> Result<StatementResult, StatementError> {
        let views_only = matches!(parsed.statement, Statement::ShowViews { .. });
        if let Some(db) = database {
            show_database(db, "TABLES").map_err(|m| position_error(parsed, m))?;
        }
        let names = self
            .catalog
            .names()
            .filter(|(_, e)| !views_only || matches!(e, CatalogEntry::View(_)))
            .map(|(n, _)| n.clone());
        let rows = show_filter(like.as_ref(), names)
            .map_err(|m| position_error(parsed, m))?
            .into_iter()
            .map(|n| vec![n])
            .collect();
        let header = if views_only {
            "view name"
        } else {
            "table name"
        };
        Ok(StatementResult::rows(&[header], rows))
    }

    /// `SHOW [USER] FUNCTIONS`.
    pub(super) fn show_functions(
        &self,
        parsed: &ParsedStatement,
        user_only: &bool,
        database: &Option<ObjectName>,
        like: &Option<ShowLike>,
    ) -> Result<StatementResult, StatementError> {
        if let Some(db) = database {
            show_database(db, "FUNCTIONS").map_err(|m| position_error(parsed, m))?;
        }
        // Flink lists user functions in lower case.
        let mut names: Vec<String> = self
            .catalog
            .function_names()
            .map(str::to_lowercase)
            .collect();
        if !user_only {
            names.extend(crate::function::names().into_iter().map(str::to_string));
            names.sort_unstable();
            names.dedup();
        }
        let names = names.into_iter();
        let rows = show_filter(like.as_ref(), names)
            .map_err(|m| position_error(parsed, m))?
            .into_iter()
            .map(|n| vec![n])
            .collect();
        Ok(StatementResult::rows(&["function name"], rows))
    }

    /// `SHOW CURRENT CATALOG` and the other one-row listings.
    pub(super) fn show_single(
        &self,
        parsed: &ParsedStatement,
        header: &&'static str,
        value: &&'static str,
        scope: &Option<ObjectName>,
        like: &Option<ShowLike>,
    ) -> Result<StatementResult, StatementError> {
        if let Some(catalog) = scope {
            let catalog = object_name_last(catalog);
            if catalog != "default_catalog" {
                return Err(position_error(
                    parsed,
                    format!("Catalog {catalog} does not exist"),
                ));
            }
        }
        let rows = show_filter(like.as_ref(), std::iter::once(value.to_string()))
            .map_err(|m| position_error(parsed, m))?
            .into_iter()
            .map(|n| vec![n])
            .collect();
        Ok(StatementResult::rows(&[header], rows))
    }

    /// `SHOW CREATE TABLE|VIEW`.
    pub(super) fn show_create(
        &self,
        parsed: &ParsedStatement,
        name: &ObjectName,
    ) -> Result<StatementResult, StatementError> {
        let name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
        // The object a query sees is the temporary one when both exist.
        let temporary = self.catalog.get_in(&name, true).is_some();
        let text = match self.catalog.get(&name) {
            Some(CatalogEntry::Table(t))
                if matches!(parsed.statement, Statement::ShowCreateTable(_)) =>
            {
                t.show_create(temporary)
            }
            Some(CatalogEntry::View(v))
                if matches!(parsed.statement, Statement::ShowCreateView(_)) =>
            {
                v.show_create(temporary, &self.catalog)
            }
            found => {
                let (asked, other) = match parsed.statement {
                    Statement::ShowCreateTable(_) => ("TABLE", "VIEW"),
                    _ => ("VIEW", "TABLE"),
                };
                let id = format!("`default_catalog`.`default_database`.`{name}`");
                return Err(position_error(
                    parsed,
                    match found {
                        None => format!(
                            "Could not execute SHOW CREATE {asked}. {} with identifier {id} does not exist.",
                            if asked == "TABLE" { "Table" } else { "View" }
                        ),
                        Some(_) => format!(
                            "SHOW CREATE {asked} is only supported for {}s, but {id} is a {}. Please use SHOW CREATE {other} instead.",
                            asked.to_ascii_lowercase(),
                            other.to_ascii_lowercase()
                        ),
                    },
                ));
            }
        };
        Ok(StatementResult::rows(&["result"], vec![vec![text]]))
    }

    /// `DESCRIBE`: a row per column with its type, nullability, key, extras and watermark.
    pub(super) fn describe(
        &self,
        parsed: &ParsedStatement,
        name: &ObjectName,
        like: &Option<ShowLike>,
    ) -> Result<StatementResult, StatementError> {
        let name = session_object_name(name).map_err(|m| position_error(parsed, m))?;
        if self.catalog.get(&name).is_none() {
            return Err(position_error(
                parsed,
                format!(
                    "Tables or views with the identifier 'default_catalog.default_database.{name}' doesn't exist."
                ),
            ));
        }
        let (schema, pk, watermark) = match self.catalog.get(&name) {
            Some(CatalogEntry::Table(t)) => {
                (t.schema(), t.primary_key.clone(), t.watermark.clone())
            }
            Some(CatalogEntry::View(v)) => (v.schema.clone(), None, None),
            None => {
                return Err(position_error(
                    parsed,
                    format!("table or view '{name}' does not exist"),
                ));
            }
        };
        let extras: Vec<String> = match self.catalog.get(&name) {
            // A program's stream (`api/`): Flink describes it as the view it is, its
            // proctime column without the PROCTIME() it is computed by here.
            Some(CatalogEntry::Table(t)) if t.provided_source.is_none() => t
                .columns
                .iter()
                .map(|c| match &c.source {
                    crate::catalog::ColumnSource::Computed { text, .. } => {
                        format!("AS {text}")
                    }
                    crate::catalog::ColumnSource::Metadata {
                        key: Some(k),
                        is_virtual,
                    } => {
                        format!(
                            "METADATA FROM '{k}'{}",
                            if *is_virtual { " VIRTUAL" } else { "" }
                        )
                    }
                    crate::catalog::ColumnSource::Metadata {
                        key: None,
                        is_virtual,
                    } => {
                        format!("METADATA{}", if *is_virtual { " VIRTUAL" } else { "" })
                    }
                    crate::catalog::ColumnSource::Physical => String::new(),
                })
                .collect(),
            _ => vec![String::new(); schema.len()],
        };
        // Flink adds a `comment` column when some column has a comment.
        let comments: Vec<Option<String>> = match self.catalog.get(&name) {
            Some(CatalogEntry::Table(t)) => t.columns.iter().map(|c| c.comment.clone()).collect(),
            _ => vec![None; schema.len()],
        };
        let with_comments = comments.iter().any(Option::is_some);
        let rows: Vec<Vec<String>> = schema
            .fields
            .iter()
            .zip(extras)
            .zip(comments)
            .map(|((f, extra), comment)| {
                let key = match &pk {
                    Some(cols) if cols.contains(&f.name) => {
                        format!("PRI({})", cols.join(", "))
                    }
                    _ => String::new(),
                };
                let wm = match &watermark {
                    Some(w) if w.column == f.name => w.text.clone(),
                    _ => String::new(),
                };
                let mut row = vec![
                    f.name.clone(),
                    f.describe_type(),
                    if f.data_type.nullable {
                        "TRUE"
                    } else {
                        "FALSE"
                    }
                    .to_string(),
                    key,
                    extra,
                    wm,
                ];
                if with_comments {
                    row.push(comment.unwrap_or_default());
                }
                row
            })
            .collect();
        let header = [
            "name",
            "type",
            "null",
            "key",
            "extras",
            "watermark",
            "comment",
        ];
        let header = if with_comments {
            &header[..]
        } else {
            &header[..6]
        };
        let keep = show_matcher(like.as_ref()).map_err(|m| position_error(parsed, m))?;
        let rows = rows.into_iter().filter(|r| keep(&r[0])).collect();
        Ok(StatementResult::rows(header, rows))
    }
}

/// Whether a listed name is kept.
type NameFilter = Box<dyn Fn(&str) -> bool>;

/// Whether a name passes the `[NOT] LIKE` / `[NOT] ILIKE` of a `SHOW` statement; a bad pattern
/// is Flink's error.
fn show_matcher(like: Option<&ShowLike>) -> Result<NameFilter, String> {
    let Some(like) = like else {
        return Ok(Box::new(|_| true));
    };
    let regex = like_to_regex(&like.pattern, Some('\\'))
        .map_err(|_| invalid_escape_message(&like.pattern))?;
    let regex = if like.case_insensitive {
        format!("(?i){regex}")
    } else {
        regex
    };
    let regex = regex::Regex::new(&regex).map_err(|e| e.to_string())?;
    let negated = like.negated;
    Ok(Box::new(move |name| regex.is_match(name) != negated))
}

/// Flink's `Invalid escape sequence '<pattern>', <index>`: the index of the escape character
/// that is not followed by `_`, `%` or itself.
fn invalid_escape_message(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' {
            match chars.get(i + 1) {
                Some('_' | '%' | '\\') => i += 2,
                _ => break,
            }
        } else {
            i += 1;
        }
    }
    format!("Invalid escape sequence '{pattern}', {i}")
}

/// The names of a `SHOW` listing that pass its `LIKE`, in their order.
fn show_filter(
    like: Option<&ShowLike>,
    names: impl Iterator<Item = String>,
) -> Result<Vec<String>, String> {
    let keep = show_matcher(like)?;
    Ok(names.filter(|n| keep(n)).collect())
}

/// Checks the `FROM|IN [catalog.]database` of `SHOW TABLES|VIEWS|FUNCTIONS` against the
/// session's one catalog and database, with Flink's errors.
fn show_database(name: &ObjectName, what: &str) -> Result<(), String> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(|i| i.value.clone()).unwrap_or_default())
        .collect();
    let (catalog, database) = match parts.as_slice() {
        [db] => ("default_catalog", db.as_str()),
        [cat, db] => (cat.as_str(), db.as_str()),
        _ => {
            return Err(format!(
                "SHOW {what} from/in identifier [ {} ] format error, it should be [catalog_name.]database_name.",
                parts.join(".")
            ));
        }
    };
    if catalog != "default_catalog" {
        return Err(format!("Catalog {catalog} does not exist"));
    }
    if database != "default_database" {
        return Err(format!("Database '{catalog}'.'{database}' doesn't exist."));
    }
    Ok(())
}
