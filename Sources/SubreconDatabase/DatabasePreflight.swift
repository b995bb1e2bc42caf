import Logging
import PostgresNIO
import SubreconCore
import SubreconPorts

/// What `run` checks as its own role before any store is asked (docs/CONTRACT.md, "What run checks first"): that
/// the database takes writes at all, that the role may read and update `users` and write its own tables, and that
/// no row-level security hides the rows from it or refuses its updates. Reads the catalog only.
public enum DatabasePreflight {
    /// subrecon's tables a run that applies writes (INSERT and UPDATE), and those it only reads.
    static let writtenTables = [
        "reconcile_runs", "reconcile_changes", "reconcile_verdicts", "push_intents", "reconcile_run_candidates",
        "reconcile_feed_windows", "refunds_seen", "reconcile_run_links", "reconcile_orphans", "reconcile_run_reports",
        "revenuecat_known_customers",
    ]
    static let readTables = ["product_tiers", "subrecon_settings", "subrecon_schema_migrations", "apple_receipts"]

    /// The relations row-level security is judged on for `users`: the relation itself when it is a table, else the
    /// tables under the view (and under views it reads, three levels deep). A view's reads run as its owner unless
    /// it is `security_invoker`; an INSTEAD OF trigger writes as the job's role unless its function is SECURITY
    /// DEFINER (then as the function's owner). One row per table: name (schema-qualified, as a policy names it), oid,
    /// reader role, writer role.
    static let rlsTablesSQL = """
        with recursive u as (
            select c.oid, c.relkind::text as kind,
                case when c.relkind = 'v' and not coalesce((select option_value in ('true', 'on', '1', 'yes') from \
        pg_options_to_table(c.reloptions) where option_name = 'security_invoker'), false) then c.relowner \
        else (select oid from pg_roles where rolname = current_user) end as reader,
                coalesce((select case when p.prosecdef then p.proowner end from pg_trigger t join pg_proc p on p.oid = t.tgfoid \
        where t.tgrelid = c.oid and t.tgtype & 81 = 81 and t.tgenabled <> 'D' limit 1), \
        case when c.relkind = 'v' and exists (select 1 from pg_trigger t where t.tgrelid = c.oid and t.tgtype & 81 = 81 \
        and t.tgenabled <> 'D') then (select oid from pg_roles where rolname = current_user) end, \
        case when c.relkind = 'v' and not coalesce((select option_value in ('true', 'on', '1', 'yes') from \
        pg_options_to_table(c.reloptions) where option_name = 'security_invoker'), false) then c.relowner \
        else (select oid from pg_roles where rolname = current_user) end) as writer
            from pg_class c where c.oid = to_regclass('users')
        ), tree(oid, kind, depth) as (
            select oid, kind, 0 from u
            union
            select d.refobjid, c.relkind::text, tree.depth + 1 from tree
            join pg_rewrite r on r.ev_class = tree.oid
            join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = r.oid and d.refclassid = 'pg_class'::regclass
            join pg_class c on c.oid = d.refobjid
            where tree.kind = 'v' and d.refobjid <> tree.oid and tree.depth < 3
        )
        select distinct (select format('%I.%I', n.nspname, t.relname) from pg_class t join pg_namespace n on n.oid = t.relnamespace \
        where t.oid = tree.oid) as name, tree.oid::bigint as rel, u.reader::bigint as reader, u.writer::bigint as writer
        from tree, u where tree.kind in ('r', 'p')
        """

    /// Why a run cannot write at all: the server is a hot standby, or sessions are read-only
    /// (`default_transaction_read_only`); nil when it takes writes.
    static func readOnlyState(connection: PostgresConnection, logger: Logger) async throws -> String? {
        let rows = try await connection.run(
            "select pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'", logger: logger)
        for try await (recovery, readOnly) in rows.decode((Bool, Bool).self) {
            if recovery { return "the server is a hot standby in recovery (pg_is_in_recovery), e.g. a replica after a failover" }
            if readOnly { return "its sessions are read-only (default_transaction_read_only = on)" }
        }
        return nil
    }

    /// The privileges the job's role lacks: SELECT (and, `writing`, UPDATE) on every contract column of `users`,
    /// SELECT on the tables it reads, SELECT/INSERT/UPDATE on those it writes and USAGE on their sequences.
    static func missingPrivileges(
        connection: PostgresConnection, logger: Logger, usersColumns: [String], written: [String], writing: Bool
    ) async throws -> [String] {
        var missing: [String] = []
        var binds = PostgresBindings()
        binds.append(usersColumns)
        binds.append(written)
        let users = try await connection.run(
            PostgresQuery(
                unsafeSQL: """
                    select coalesce(array_agg(a.attname::text order by a.attnum) filter (where not has_column_privilege(c.oid, a.attnum, 'SELECT')), '{}'), \
                    coalesce(array_agg(a.attname::text order by a.attnum) filter (where a.attname::text = any($2) \
                    and not has_column_privilege(c.oid, a.attnum, 'UPDATE')), '{}'), c.oid::regclass::text \
                    from pg_class c join pg_attribute a on a.attrelid = c.oid \
                    where c.oid = to_regclass('users') and a.attnum > 0 and not a.attisdropped and a.attname::text = any($1) \
                    group by c.oid
                    """, binds: binds), logger: logger)
        for try await (unreadable, unwritable, name) in users.decode(([String], [String], String).self) {
            if !unreadable.isEmpty { missing.append("SELECT on \(name) (\(unreadable.joined(separator: ", ")))") }
            if writing, !unwritable.isEmpty { missing.append("UPDATE on \(name) (\(unwritable.joined(separator: ", ")))") }
        }
        var pairs: [(String, String)] = readTables.map { ($0, "SELECT") }
        if writing { pairs += writtenTables.flatMap { [($0, "SELECT"), ($0, "INSERT"), ($0, "UPDATE")] } }
        var tableBinds = PostgresBindings()
        tableBinds.append(pairs.map(\.0))
        tableBinds.append(pairs.map(\.1))
        tableBinds.append(writing ? writtenTables : [])
        let tables = try await connection.run(
            PostgresQuery(
                unsafeSQL: """
                    select p || ' on ' || to_regclass(t)::text from unnest($1::text[], $2::text[]) with ordinality as x(t, p, n) \
                    where to_regclass(t) is not null and not has_table_privilege(to_regclass(t), p) \
                    union all \
                    select 'USAGE on sequence ' || s from (select pg_get_serial_sequence(t, a.attname::text) as s \
                    from unnest($3::text[]) as t join pg_attribute a on a.attrelid = to_regclass(t) and a.attnum > 0 \
                    and not a.attisdropped) q where s is not null and not has_sequence_privilege(s, 'USAGE')
                    """, binds: tableBinds), logger: logger)
        for try await line in tables.decode(String.self) { missing.append(line) }
        return missing
    }

    /// The one definition of rows proven visible (docs/CONTRACT.md, "What run checks first"): SQL true when the role
    /// `r.role` sees every row of table `r.oid` for `r.needs` ('SELECT', or 'UPDATE': its rows and its new rows). Only
    /// this proves it: no row-level security on the table; a superuser or BYPASSRLS role; the table's owner (or a role
    /// with its privileges) without FORCE ROW LEVEL SECURITY; or a permissive policy `USING (true)` (for UPDATE also
    /// `WITH CHECK` absent or `true`) that applies to the role (one of its roles, or PUBLIC) for the command, with no
    /// restrictive policy that may apply narrowing it. A policy's `USING (id = auth.uid())` admits only some rows.
    static let provenVisibleSQL = """
        exists (select 1 from pg_class c join pg_roles ro on ro.oid = r.role where c.oid = r.oid and (
            not c.relrowsecurity or ro.rolsuper or ro.rolbypassrls
            or (not c.relforcerowsecurity and pg_has_role(r.role, c.relowner, 'USAGE'))
            or (exists (select 1 from pg_policy p where p.polrelid = r.oid and p.polpermissive
                    and p.polcmd::text in ('*', case r.needs when 'SELECT' then 'r' else 'w' end)
                    and (0::oid = any(p.polroles) or exists (select 1 from unnest(p.polroles) pr where pg_has_role(r.role, pr, 'USAGE')))
                    and pg_get_expr(p.polqual, p.polrelid) = 'true'
                    and (r.needs = 'SELECT' or p.polwithcheck is null or pg_get_expr(p.polwithcheck, p.polrelid) = 'true'))
                and not exists (select 1 from pg_policy p where p.polrelid = r.oid and not p.polpermissive
                    and p.polcmd::text in ('*', case r.needs when 'SELECT' then 'r' else 'w' end)
                    and (0::oid = any(p.polroles) or exists (select 1 from unnest(p.polroles) pr where pg_has_role(r.role, pr, 'MEMBER')))
                    and not (coalesce(pg_get_expr(p.polqual, p.polrelid), 'true') = 'true'
                        and coalesce(pg_get_expr(p.polwithcheck, p.polrelid), 'true') = 'true')))))
        """

    /// The tables under `users` whose rows are not proven visible (`provenVisibleSQL`) to the role reading them, and,
    /// when `$1` (a run that applies), to the role writing them for SELECT and UPDATE: `unproven(name, oid, role, needs)`.
    static let unprovenSQL = """
        with t as (\(rlsTablesSQL)), r(name, oid, role, needs) as (
            select t.name, t.rel::oid, t.reader::oid, 'SELECT' from t
            union all select t.name, t.rel::oid, t.writer::oid, 'SELECT' from t where $1
            union all select t.name, t.rel::oid, t.writer::oid, 'UPDATE' from t where $1
        ), unproven as (select * from r where not \(provenVisibleSQL))
        """

    /// Row-level security that may hide some of `users`' rows from the job's role or refuse some of its updates: every
    /// table under `users` whose rows are not proven visible (`provenVisibleSQL`) to the role reading it (and, when
    /// `writing`, writing it). One line per table and role naming its policies and the policy to add; empty when
    /// nothing stands in the way.
    static func rowSecurityProblems(connection: PostgresConnection, logger: Logger, writing: Bool) async throws -> [String] {
        let sql = """
            \(unprovenSQL)
            select u.name, quote_ident(pg_get_userbyid(u.role)), string_agg(distinct u.needs, ' and ' order by u.needs),
            coalesce((select string_agg(quote_ident(p.polname) || case when p.polpermissive then '' else ' (restrictive)' end,
                ', ' order by p.polname) from pg_policy p where p.polrelid = u.oid), 'none')
            from unproven u group by u.name, u.role, u.oid order by 1, 2
            """
        var binds = PostgresBindings()
        binds.append(writing)
        var problems: [String] = []
        let rows = try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        for try await (table, role, needs, policies) in rows.decode((String, String, String, String).self) {
            let policy =
                needs.contains("UPDATE")
                ? "create policy subrecon_all on \(table) for all to \(role) using (true) with check (true)"
                : "create policy subrecon_read on \(table) for select to \(role) using (true)"
            problems.append(
                "row-level security on \(table) applies to role \(role) and no policy lets it \(needs) every row "
                    + "(its policies: \(policies); a night would see or change only the rows they admit, and end in "
                    + "success having asked about none): add `\(policy)` (README, \"Your database\") or give the role BYPASSRLS")
        }
        return problems
    }

    /// Whether row-level security may refuse the job's update of some row of `users` now: some table under `users` is
    /// not proven visible to its reader and writer (`provenVisibleSQL`, the definition `run` checks first). Only then
    /// may a compare-and-set that updated nothing while the row still reads as it was read be a policy's refusal
    /// rather than another writer holding the row (docs/CONTRACT.md, "Applying").
    static func rowSecurityMayRefuse(connection: PostgresConnection, logger: Logger) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(true)
        let sql = "\(unprovenSQL) select exists (select 1 from unproven)"
        for try await mayRefuse in try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).decode(Bool.self) {
            return mayRefuse
        }
        return true
    }

    /// The privileges the roles that really read and write the tables under a `users` view lack
    /// (docs/CONTRACT.md, "What run checks first"): SELECT for the role reading each (the view's owner, or the job's
    /// role under a `security_invoker` view), UPDATE, when `writing`, for the role writing it (the job's role, or the
    /// owner of a SECURITY DEFINER INSTEAD OF trigger function). SELECT holds with the table's privilege or that of
    /// every column a view reads; UPDATE with the table's or any column's. Empty when `users` is a table.
    static func underlyingPrivileges(connection: PostgresConnection, logger: Logger, writing: Bool) async throws -> [String] {
        let sql = """
            select x.p || ' on ' || t.name || case when x.role = (select oid from pg_roles where rolname = current_user) \
            then '' else ' (for role ' || quote_ident(pg_get_userbyid(x.role)) || ', which ' \
            || case x.p when 'SELECT' then 'reads' else 'writes' end || ' it for the view)' end
            from (\(rlsTablesSQL)) t cross join lateral (values ('SELECT', t.reader::oid), ('UPDATE', t.writer::oid)) x(p, role)
            where t.rel::oid is distinct from to_regclass('users')::oid and (x.p = 'SELECT' or $1)
            and not has_table_privilege(x.role, t.rel::oid, x.p)
            and not (x.p = 'UPDATE' and has_any_column_privilege(x.role, t.rel::oid, 'UPDATE'))
            and not (x.p = 'SELECT' and coalesce((select bool_and(has_column_privilege(x.role, t.rel::oid, d.refobjsubid::int2, 'SELECT')) \
            from pg_depend d where d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass \
            and d.refobjid = t.rel::oid and d.refobjsubid > 0), false))
            order by 1
            """
        var binds = PostgresBindings()
        binds.append(writing)
        var missing: [String] = []
        let rows = try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        for try await line in rows.decode(String.self) { missing.append(line) }
        return missing
    }
}

extension SubscriptionDatabase {
    /// Why a run that applies cannot write to this database (a hot standby, read-only sessions); nil when it can.
    public func readOnlyState() async throws -> String? {
        try await run("check the database takes writes") {
            try await session.withTransaction { try await DatabasePreflight.readOnlyState(connection: $0, logger: logger) }
        }
    }

    /// Every reason the job's role cannot read (and, `writing`, write) what a run needs, one line each: missing
    /// privileges, then row-level security without a policy for the role. Empty when nothing stands in the way.
    public func accessProblems(writing: Bool) async throws -> [String] {
        let read =
            UsersContract.requiredColumns.map { $0.name } + users.presentIdentifierColumns.map(\.name)
            + (users.hasAccountToken ? ["account_token"] : [])
        let written = UsersContract.writtenColumns + users.presentIdentifierColumns.map(\.name)
        return try await run("check the role's privileges") {
            try await session.withTransaction { connection in
                var missing = try await DatabasePreflight.missingPrivileges(
                    connection: connection, logger: logger, usersColumns: read, written: written, writing: writing)
                missing += try await DatabasePreflight.underlyingPrivileges(connection: connection, logger: logger, writing: writing)
                var problems: [String] = []
                if !missing.isEmpty {
                    let role = try await Self.currentRole(connection: connection, logger: logger)
                    problems.append(
                        "the database role \(role) lacks \(missing.joined(separator: ", ")); grant "
                            + "\(missing.count == 1 ? "it" : "them") (README, \"Your database\")")
                }
                problems += try await DatabasePreflight.rowSecurityProblems(connection: connection, logger: logger, writing: writing)
                return problems
            }
        }
    }

    static func currentRole(connection: PostgresConnection, logger: Logger) async throws -> String {
        for try await role in try await connection.run("select current_user::text", logger: logger).decode(String.self) {
            return role
        }
        return "?"
    }
}
