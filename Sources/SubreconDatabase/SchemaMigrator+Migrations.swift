extension SchemaMigrator {
    /// subrecon's migrations, in order. Append; never rewrite an applied one. An index on `users` goes in
    /// `usersIndexes` (built concurrently on a table that already holds the app's rows: docs/CONTRACT.md, "Database").
    public static let migrations: [SchemaMigration] = [
        SchemaMigration(
            version: 1, name: "initial tables (CONTRACT 'Database') and candidate-scan indexes",
            ownUsersStatements: [
                """
                create table if not exists users (
                    id text primary key,
                    current_tier integer not null default 0,
                    subscription_status text not null default 'none',
                    subscription_end_date timestamptz null,
                    grace_period_ends_at timestamptz null,
                    subscription_source text null,
                    iap_product_id text null,
                    iap_original_transaction_id text null,
                    auto_renew boolean null,
                    updated_at timestamptz not null default now()
                )
                """,
                // CONTRACT "Which users a run asks about" rule 1: paid rows with an end date.
                """
                create index if not exists users_paid_with_end_idx on users (id)
                    where current_tier > 0 and subscription_end_date is not null
                """,
                // CONTRACT "Which users a run asks about" rule 2: billing issue.
                """
                create index if not exists users_billing_issue_idx on users (id)
                    where subscription_status = 'billing_issue'
                """,
                // CONTRACT "Which users a run asks about" rule 3: recently lapsed, by end date.
                """
                create index if not exists users_lapsed_end_idx on users (subscription_end_date, id)
                    where subscription_status in ('expired', 'canceled', 'refunded')
                """,
            ],
            statements: [
                """
                create table if not exists product_tiers (
                    product_id text primary key,
                    tier integer not null,
                    entitlement text
                )
                """,
                """
                create table if not exists push_intents (
                    id bigserial primary key,
                    user_id text not null,
                    kind text not null,
                    dedupe_key text not null unique,
                    payload jsonb not null,
                    run_id text,
                    created_at timestamptz not null default now(),
                    sent_at timestamptz null
                )
                """,
                "create index if not exists push_intents_unsent_idx on push_intents (id) where sent_at is null",
                """
                create table if not exists reconcile_runs (
                    id text primary key,
                    mode text not null,
                    as_of timestamptz not null,
                    shard_index integer not null default 0,
                    shard_count integer not null default 1,
                    dry_run boolean not null default false,
                    status text not null default 'running'
                        check (status in ('running', 'completed', 'valve_tripped', 'failed')),
                    started_at timestamptz not null default now(),
                    finished_at timestamptz null,
                    counts jsonb not null default '{}'::jsonb,
                    options jsonb not null default '{}'::jsonb
                )
                """,
                "create index if not exists reconcile_runs_started_idx on reconcile_runs (started_at desc)",
                """
                create table if not exists reconcile_changes (
                    id bigserial primary key,
                    run_id text not null,
                    user_id text not null,
                    before jsonb not null,
                    after jsonb not null,
                    action text not null,
                    drift text[] not null default '{}',
                    created_at timestamptz not null default now()
                )
                """,
                "create index if not exists reconcile_changes_run_idx on reconcile_changes (run_id)",
                "create index if not exists reconcile_changes_user_idx on reconcile_changes (user_id, created_at)",
            ]),
        SchemaMigration(
            version: 2, name: "candidate scan: lapsed users in id order (one ordered index scan per candidate rule)",
            usersIndexes: [
                UsersIndex("users_lapsed_id_idx", "(id) where subscription_status in ('expired', 'canceled', 'refunded')")
            ], statements: []),
        SchemaMigration(
            version: 3, name: "per-run verdict ledger and run progress (resume, report re-rendering)",
            statements: [
                """
                create table if not exists reconcile_verdicts (
                    run_id text not null,
                    seq bigint not null,
                    user_id text not null,
                    verdict jsonb not null,
                    outcome text,
                    queued_intents jsonb,
                    primary key (run_id, seq)
                )
                """,
                "create unique index if not exists reconcile_verdicts_run_user on reconcile_verdicts (run_id, user_id)",
                "alter table reconcile_runs add column if not exists validated bigint not null default 0",
                "alter table reconcile_runs add column if not exists scan_cursor text",
                "alter table reconcile_runs add column if not exists scan_done boolean not null default false",
                "alter table reconcile_runs add column if not exists held_tier integer not null default 0",
                "alter table reconcile_runs add column if not exists would_lose_tier integer not null default 0",
                "alter table reconcile_runs add column if not exists user_errors integer not null default 0",
                "alter table reconcile_runs add column if not exists selection jsonb",
            ]),
        SchemaMigration(
            version: 4, name: "optional legacy App Store receipts (verifyReceipt bridge)",
            statements: [
                """
                create table if not exists apple_receipts (
                    user_id text primary key,
                    receipt_data text not null,
                    updated_at timestamptz not null default now()
                )
                """
            ]),
        SchemaMigration(
            version: 5, name: "store identifiers for Stripe and Google Play (CONTRACT 'Database')",
            ownUsersStatements: [
                "alter table users add column if not exists stripe_customer_id text null",
                "alter table users add column if not exists google_purchase_token text null",
            ], statements: []),
        SchemaMigration(
            version: 6, name: "per-run candidates named by store feeds and the sweep, joined into the keyset scan",
            statements: [
                """
                create table if not exists reconcile_run_candidates (
                    run_id text not null,
                    user_id text not null,
                    reasons text[] not null,
                    primary key (run_id, user_id)
                )
                """
            ]),
        SchemaMigration(
            version: 7, name: "refunds seen, once per store transaction, for the refund review (CONTRACT 'Finance figures')",
            statements: [
                """
                create table if not exists refunds_seen (
                    store text not null,
                    transaction_id text not null,
                    user_id text not null,
                    refunded_at timestamptz not null,
                    amount text null,
                    currency text null,
                    run_id text not null,
                    primary key (store, transaction_id)
                )
                """,
                "create index if not exists refunds_seen_user_idx on refunds_seen (user_id, refunded_at)",
                "create index if not exists refunds_seen_refunded_at_idx on refunds_seen (refunded_at)",
            ]),
        // The windows each store feed was read over, per shard (CONTRACT "Hostile answers and bounded work").
        SchemaMigration(
            version: 8, name: "store feed windows read to their end, per feed and shard (CONTRACT 'Hostile answers and bounded work')",
            statements: [
                """
                create table if not exists reconcile_feed_windows (
                    run_id text not null,
                    feed text not null,
                    shard_index integer not null,
                    shard_count integer not null,
                    since timestamptz not null,
                    until timestamptz not null check (until >= since),
                    complete boolean not null default false,
                    started_at timestamptz not null default now(),
                    read_at timestamptz null,
                    primary key (run_id, feed)
                )
                """,
                "create index if not exists reconcile_feed_windows_feed_idx on reconcile_feed_windows (feed, shard_index, shard_count, until)",
            ]),
        // Whose purchase it is (CONTRACT "Database" `account_token`, 5.10 links, 5.6 `orphans.csv`).
        SchemaMigration(
            version: 9, name: "account_token, tonight's purchase links and the orphans kept across nights",
            ownUsersStatements: [
                "alter table users add column if not exists account_token text null"
            ],
            usersIndexes: [UsersIndex("users_account_token_idx", "(account_token) where account_token is not null")],
            statements: [
                """
                create table if not exists reconcile_run_links (
                    run_id text not null,
                    user_id text not null,
                    origin text not null,
                    identifier text not null,
                    primary key (run_id, user_id, origin)
                )
                """,
                """
                create table if not exists reconcile_orphans (
                    origin text not null,
                    identifier text not null,
                    product_id text not null,
                    status text not null,
                    end_date timestamptz null,
                    account_token text null,
                    price_amount numeric null,
                    price_currency text null,
                    first_seen timestamptz not null,
                    last_seen timestamptz not null,
                    last_run_id text not null,
                    primary key (origin, identifier)
                )
                """,
                "create index if not exists reconcile_orphans_last_seen_idx on reconcile_orphans (last_seen)",
            ]),
        // docs/CONTRACT.md "Reports": `report RUN_ID` renders a run's folder byte for byte, also after later nights.
        SchemaMigration(
            version: 10, name: "each run's report inputs later nights move: orphans.csv, refund_review.csv, the charted history",
            statements: [
                """
                create table if not exists reconcile_run_reports (
                    run_id text not null,
                    name text not null,
                    content text not null,
                    primary key (run_id, name)
                )
                """
            ]),
        // docs/own-tables.md "Indexes the team may want": who holds a purchase is asked per Apple user and per feed page;
        // without these a night reads the whole table once per Apple user.
        SchemaMigration(
            version: 11, name: "indexes on the store identifier columns (who holds a purchase)",
            usersIndexes: [
                UsersIndex(
                    "users_iap_original_transaction_idx", "(iap_original_transaction_id) where iap_original_transaction_id is not null"),
                UsersIndex("users_stripe_customer_idx", "(stripe_customer_id) where stripe_customer_id is not null"),
                UsersIndex("users_google_purchase_token_idx", "(google_purchase_token) where google_purchase_token is not null"),
            ],
            statements: []),
        // docs/CONTRACT.md "subrecon finance": a period's applied changes, read per run without scanning every verdict.
        SchemaMigration(
            version: 12, name: "the ledger's applied entries per run (finance over a period)",
            statements: [
                "create index if not exists reconcile_verdicts_applied_idx on reconcile_verdicts (run_id, seq) where outcome = 'applied'",
                """
                create index if not exists reconcile_verdicts_billing_issue_idx on reconcile_verdicts (run_id, seq) \
                where verdict->'truth'->>'status' = 'billing_issue'
                """,
            ]),
        // docs/CONTRACT.md "Sources and the decision": the users RevenueCat answered for, so that with API v2 a known
        // user needs no v2 question (v1 creates nothing for a customer RevenueCat already has).
        SchemaMigration(
            version: 13, name: "users RevenueCat has answered for (no v2 question before v1 for them)",
            statements: [
                """
                create table if not exists revenuecat_known_customers (
                    user_id text primary key,
                    first_known_at timestamptz not null default now()
                )
                """
            ]),
    ]
}
