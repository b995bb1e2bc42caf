-- subrecon on a Supabase-shaped app that keeps its own tables (docs/CONTRACT.md, Database; docs/own-tables.md).
--
-- The app keeps its users in public.profiles (a `subscription` enum free|monthly|annual|lifetime and its
-- expiry) and its StoreKit purchases in public.ios_subscriptions. Nothing is moved: subrecon gets a schema of its
-- own, `subrecon`, whose `users` is an updatable view over the app's tables. `subrecon migrate` then creates its
-- other tables (product_tiers, push_intents, reconcile_runs, ...) next to the view and never alters it.
--
-- Connect subrecon with the subrecon schema first in search_path:
--   DATABASE_URL='postgres://subrecon:...@db.example.supabase.co:5432/postgres?sslmode=require&options=-csearch_path%3Dsubrecon,public'
-- then: subrecon migrate; subrecon products import tiers.csv; subrecon run.
--
-- Tiers: free = 0, monthly = 1, annual = 2, lifetime = 3 (the app's priority lifetime > annual > monthly).
-- product_tiers must map every product to one of these tiers: a tier the enum cannot hold makes the view's
-- trigger raise, which rolls back that apply batch (the run stops, exit 75) rather than storing a wrong plan.
--
-- Every name below is schema-qualified: run the file as is (part 1 only on an empty database: your app already has
-- its tables), or substitute the two schema names.

-- ---------------------------------------------------------------------------------------------------------------
-- Part 1. The app's tables, as the app has them (shown so the example runs on an empty database).
-- ---------------------------------------------------------------------------------------------------------------
create type public.subscription_plan as enum ('free', 'monthly', 'annual', 'lifetime');

create table public.profiles (
    id uuid primary key,                                   -- Supabase: references auth.users (id)
    display_name text,
    subscription public.subscription_plan not null default 'free',
    subscription_expires_at timestamptz,                   -- null for free and lifetime
    stripe_customer_id text,                               -- the web checkout's customer (cus_...)
    updated_at timestamptz not null default now()          -- every writer bumps it (the app's webhook handlers too)
);

create table public.ios_subscriptions (
    user_id uuid primary key references public.profiles (id) on delete cascade,
    original_transaction_id text not null unique,
    product_id text not null,
    expires_at timestamptz,
    auto_renew boolean,
    environment text not null default 'Production',
    updated_at timestamptz not null default now()
);

-- ---------------------------------------------------------------------------------------------------------------
-- Part 2. subrecon's schema, and the state the app's tables have no column for.
-- ---------------------------------------------------------------------------------------------------------------
create schema if not exists subrecon;

-- What subrecon last wrote that the app's tables cannot hold (status, grace period, source, product, auto-renew,
-- original transaction id), with the `updated_at` it wrote. The view believes these values only while that
-- `updated_at` is still the user's: once the app writes the user again (its handlers bump `updated_at`), the
-- view shows what the app's own tables say.
create table if not exists subrecon.user_state (
    user_id uuid primary key references public.profiles (id) on delete cascade,
    subscription_status text not null,
    grace_period_ends_at timestamptz,
    subscription_source text,
    iap_product_id text,
    iap_original_transaction_id text,
    auto_renew boolean,
    written_at timestamptz not null
);

-- ---------------------------------------------------------------------------------------------------------------
-- Part 3. The view: subrecon's contract columns (docs/CONTRACT.md, Database) over the app's tables.
-- ---------------------------------------------------------------------------------------------------------------
create or replace view subrecon.users as
select
    r.id,
    r.current_tier,
    case when r.state_current then r.st_status
         when r.current_tier > 0 then 'active'
         when r.subscription_end_date is not null then 'expired'              -- lapsed: re-checked for a renewal
         else 'none' end                                                     as subscription_status,
    r.subscription_end_date,
    case when r.state_current then r.st_grace end                            as grace_period_ends_at,
    case when r.state_current then r.st_source
         when r.ios_user is not null then 'apple_iap'
         when r.stripe_customer_id is not null then 'stripe' end             as subscription_source,
    case when r.state_current then r.st_product else r.ios_product end       as iap_product_id,
    case when r.state_current then r.st_original else r.ios_original end     as iap_original_transaction_id,
    case when r.state_current then r.st_auto_renew else r.ios_auto_renew end as auto_renew,
    r.updated_at,
    r.stripe_customer_id,
    null::text                                                               as google_purchase_token
from (
    select
        p.id::text                                                           as id,
        -- value map: the app's enum -> subrecon's tier
        case p.subscription when 'free' then 0 when 'monthly' then 1 when 'annual' then 2 when 'lifetime' then 3 end
                                                                             as current_tier,
        p.subscription_expires_at                                            as subscription_end_date,
        p.stripe_customer_id,
        i.user_id                                                            as ios_user,
        i.product_id                                                         as ios_product,
        i.original_transaction_id                                            as ios_original,
        i.auto_renew                                                         as ios_auto_renew,
        -- the user's updated_at: the later of the app's two rows (a webhook may write either)
        greatest(p.updated_at, i.updated_at)                                 as updated_at,
        coalesce(st.written_at = greatest(p.updated_at, i.updated_at), false) as state_current,
        st.subscription_status                                               as st_status,
        st.grace_period_ends_at                                              as st_grace,
        st.subscription_source                                               as st_source,
        st.iap_product_id                                                    as st_product,
        st.iap_original_transaction_id                                       as st_original,
        st.auto_renew                                                        as st_auto_renew
    from public.profiles p
    left join public.ios_subscriptions i on i.user_id = p.id
    left join subrecon.user_state st on st.user_id = p.id
) r;

-- ---------------------------------------------------------------------------------------------------------------
-- Part 4. Writing through the view: subrecon only ever UPDATEs users (never inserts or deletes).
-- ---------------------------------------------------------------------------------------------------------------
-- subrecon's update is a compare-and-set on updated_at (docs/CONTRACT.md, Applying): it writes only rows whose updated_at is still the
-- one it read, and a row another writer holds is left for the next run, never waited for. On a view PostgreSQL
-- cannot lock rows through outer joins, so subrecon leaves both duties to this trigger:
--   * lock the app's rows with FOR UPDATE SKIP LOCKED (a webhook's open transaction: skip, never wait);
--   * compare the current updated_at with OLD.updated_at (what subrecon read); if another writer changed it,
--     return NULL: the row is not written and subrecon reports the user `concurrent_update`;
--   * else write every column back, and the new updated_at into all three rows, so the view shows exactly what
--     was written and the next run finds the user in sync.
create or replace function subrecon.users_update() returns trigger
language plpgsql as $$
declare
    uid uuid := OLD.id::uuid;
    profile_at timestamptz;
    ios_at timestamptz;
    plan public.subscription_plan;
    written timestamptz;
begin
    if NEW.id is distinct from OLD.id then
        raise exception 'subrecon.users: id cannot change';
    end if;
    -- value map back: subrecon's tier -> the app's enum
    plan := case NEW.current_tier when 0 then 'free' when 1 then 'monthly' when 2 then 'annual' when 3 then 'lifetime' end;
    if plan is null then
        raise exception 'subrecon.users: tier % has no subscription plan (product_tiers must use 0-3)', NEW.current_tier;
    end if;

    select p.updated_at into profile_at from public.profiles p where p.id = uid for update skip locked;
    if not found then
        return null;  -- gone, or held by another writer right now
    end if;
    if exists (select 1 from public.ios_subscriptions i where i.user_id = uid) then
        select i.updated_at into ios_at from public.ios_subscriptions i where i.user_id = uid for update skip locked;
        if not found then
            return null;  -- held by another writer right now
        end if;
    end if;
    if greatest(profile_at, ios_at) is distinct from OLD.updated_at then
        return null;  -- written since subrecon read it: that write wins
    end if;

    update public.profiles set
        subscription = plan,
        subscription_expires_at = NEW.subscription_end_date,
        updated_at = NEW.updated_at
    where id = uid;
    -- The app's StoreKit row follows when the App Store purchase grants the tier.
    update public.ios_subscriptions set
        product_id = case when NEW.subscription_source = 'apple_iap' and NEW.iap_product_id is not null
                          then NEW.iap_product_id else product_id end,
        expires_at = case when NEW.subscription_source = 'apple_iap' then NEW.subscription_end_date else expires_at end,
        auto_renew = case when NEW.subscription_source = 'apple_iap' then NEW.auto_renew else auto_renew end,
        updated_at = NEW.updated_at
    where user_id = uid;
    -- The updated_at now stored (the app's own `moddatetime`-style triggers may have set their own).
    select greatest(p.updated_at, i.updated_at) into written
    from public.profiles p left join public.ios_subscriptions i on i.user_id = p.id where p.id = uid;
    insert into subrecon.user_state as s (
        user_id, subscription_status, grace_period_ends_at, subscription_source, iap_product_id,
        iap_original_transaction_id, auto_renew, written_at)
    values (
        uid, NEW.subscription_status, NEW.grace_period_ends_at, NEW.subscription_source, NEW.iap_product_id,
        NEW.iap_original_transaction_id, NEW.auto_renew, written)
    on conflict (user_id) do update set
        subscription_status = excluded.subscription_status,
        grace_period_ends_at = excluded.grace_period_ends_at,
        subscription_source = excluded.subscription_source,
        iap_product_id = excluded.iap_product_id,
        iap_original_transaction_id = excluded.iap_original_transaction_id,
        auto_renew = excluded.auto_renew,
        written_at = excluded.written_at;
    NEW.updated_at := written;
    return NEW;
end
$$;

create or replace trigger users_update
    instead of update on subrecon.users
    for each row execute function subrecon.users_update();

-- ---------------------------------------------------------------------------------------------------------------
-- Part 5. What the app may want for a fast candidate scan (subrecon never indexes the app's tables).
-- ---------------------------------------------------------------------------------------------------------------
-- The scan pages through users in id order (`id > $last order by id limit N`), with id = profiles.id::text:
--   create index if not exists profiles_id_text_idx on public.profiles ((id::text));
--   create index if not exists profiles_paid_expiry_idx on public.profiles (subscription_expires_at)
--       where subscription <> 'free';
-- and the store feeds look users up by their store identifiers (ios_subscriptions.original_transaction_id is
-- unique above, so already indexed):
--   create index if not exists profiles_stripe_customer_idx on public.profiles (stripe_customer_id);
--
-- Part 6. Privileges, when subrecon connects as its own role (recommended on Supabase):
--   grant usage, create on schema subrecon to subrecon;
--   grant select, update on subrecon.users to subrecon;
--   -- the trigger runs as the invoker: the role also needs these on the app's tables
--   grant usage on schema public to subrecon;
--   grant select, update on public.profiles, public.ios_subscriptions to subrecon;
--   grant select, insert, update on subrecon.user_state to subrecon;
