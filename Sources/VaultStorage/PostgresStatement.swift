/// A named SQL statement, prepared once per connection.
struct PostgresStatement: Sendable {
    /// The prepared-statement name; unique per statement.
    let name: String
    /// The SQL with `$1`-style parameters.
    let sql: String
}
