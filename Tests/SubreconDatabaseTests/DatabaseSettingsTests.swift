import NIOSSL
import PostgresNIO
import SubreconDatabase
import SubreconPorts
import Testing

@Suite("DatabaseSettings")
struct DatabaseSettingsTests {
    @Test("a full URL gives user, percent-decoded password, host, port, database and sslmode")
    func fullURL() throws {
        let settings = try DatabaseSettings(environment: [
            "DATABASE_URL": "postgres://app%40corp:p%40ss%3Aw0rd@db.example.com:6543/billing?sslmode=require"
        ])
        #expect(settings.username == "app@corp")
        #expect(settings.password == "p@ss:w0rd")
        #expect(settings.host == "db.example.com")
        #expect(settings.port == 6543)
        #expect(settings.database == "billing")
        #expect(settings.sslMode == .require)
        #expect(settings.origin == "DATABASE_URL")
        let client = settings.clientConfiguration()
        #expect(client.host == "db.example.com")
        #expect(client.port == 6543)
        #expect(client.username == "app@corp")
        #expect(client.password == "p@ss:w0rd")
        #expect(client.database == "billing")
    }

    @Test("postgresql:// scheme, IPv6 host, default port; missing parts come from PG* variables")
    func schemeAndFallbacks() throws {
        let settings = try DatabaseSettings(environment: [
            "DATABASE_URL": "postgresql://[::1]/", "PGUSER": "carol", "PGPASSWORD": "pw", "USER": "ignored",
        ])
        #expect(settings.host == "::1")
        #expect(settings.port == 5432)
        #expect(settings.username == "carol")
        #expect(settings.password == "pw")
        #expect(settings.database == "carol")
        #expect(settings.sslMode == .prefer)
        #expect(settings.endpoint == "[::1]:5432")
    }

    @Test("without DATABASE_URL the PG* variables are used, with libpq's defaults")
    func libpqVariables() throws {
        let defaults = try DatabaseSettings(environment: ["USER": "dave"])
        #expect(defaults.host == "localhost")
        #expect(defaults.port == 5432)
        #expect(defaults.username == "dave")
        #expect(defaults.password == nil)
        #expect(defaults.database == "dave")
        #expect(defaults.origin == "PG*")

        let explicit = try DatabaseSettings(environment: [
            "PGHOST": "pg.internal", "PGPORT": "5433", "PGUSER": "eve", "PGPASSWORD": "secret",
            "PGDATABASE": "subs", "PGSSLMODE": "verify-full", "USER": "dave",
        ])
        #expect(explicit.host == "pg.internal")
        #expect(explicit.port == 5433)
        #expect(explicit.username == "eve")
        #expect(explicit.password == "secret")
        #expect(explicit.database == "subs")
        #expect(explicit.sslMode == .verifyFull)
    }

    @Test("a socket directory as host connects over the unix socket")
    func unixSocket() throws {
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": "postgres://u@/db?host=/tmp/pg&port=55433"])
        #expect(settings.unixSocketPath == "/tmp/pg/.s.PGSQL.55433")
        #expect(settings.clientConfiguration().unixSocketPath == "/tmp/pg/.s.PGSQL.55433")
    }

    @Test(
        "each sslmode maps to the TLS behaviour libpq gives it",
        arguments: [
            ("disable", nil), ("allow", CertificateVerification.none), ("prefer", CertificateVerification.none),
            ("require", CertificateVerification.none),
            ("verify-ca", .noHostnameVerification), ("verify-full", .fullVerification),
        ] as [(String, CertificateVerification?)])
    func sslModes(mode: String, verification: CertificateVerification?) throws {
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": "postgres://u@h/db?sslmode=\(mode)"])
        #expect(settings.sslMode.rawValue == mode)
        #expect(settings.tlsConfiguration()?.certificateVerification == verification)
    }

    @Test(
        "search_path comes from the search_path parameter or from options",
        arguments: [
            "postgres://u@h/db?search_path=tenant_a", "postgres://u@h/db?options=-csearch_path%3Dtenant_a",
            "postgres://u@h/db?options=-c%20search_path%3Dtenant_a", "postgres://u@h/db?options=--search-path%3Dtenant_a",
        ])
    func searchPath(url: String) throws {
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": url])
        #expect(settings.searchPath == "tenant_a")
        // Set after connecting (SessionSetup), never a startup parameter: a stock PgBouncer refuses those.
        let parameters = settings.clientConfiguration().options.additionalStartupParameters
        #expect(parameters.map(\.0) == ["application_name"])
        #expect(settings.session.requestedSchema == "tenant_a")
        #expect(settings.directStartupParameters.contains { $0.0 == "search_path" && $0.1 == "tenant_a" })
    }

    @Test(
        "the schema a session must be in is search_path's first entry as PostgreSQL names it",
        arguments: [
            ("tenant_a", "tenant_a"), ("Tenant_A, public", "tenant_a"), ("\"Tenant_A\",public", "Tenant_A"),
            ("  spaced  ,public", "spaced"), ("\"a\"\"b\"", "a\"b"), ("\"$user\", public", nil), ("$user", nil),
        ] as [(String, String?)])
    func requestedSchema(searchPath: String, schema: String?) {
        let setup = SessionSetup(searchPath: searchPath, timeouts: .init())
        #expect(setup.requestedSchema == schema)
        #expect(SessionSetup(searchPath: nil, timeouts: .init()).requestedSchema == nil)
    }

    @Test("PGOPTIONS can set the search_path too")
    func pgOptions() throws {
        let settings = try DatabaseSettings(environment: ["USER": "u", "PGOPTIONS": "-c search_path=tenant_b"])
        #expect(settings.searchPath == "tenant_b")
    }

    @Test(
        "a malformed setting names the variable and never shows the password",
        arguments: [
            (["DATABASE_URL": "mysql://bob:Sup3rS3cret@h/db"], "DATABASE_URL"),
            (["DATABASE_URL": "postgres://bob:Sup3rS3cret@h:port/db"], "DATABASE_URL"),
            (["DATABASE_URL": "postgres://bob:Sup3rS3cret@h:99999/db"], "DATABASE_URL"),
            (["DATABASE_URL": "postgres://bob:Sup3rS3cret@h/db?sslmode=sometimes"], "DATABASE_URL"),
            (["DATABASE_URL": "postgres://bob:Sup3rS3cret%zz@h/db"], "DATABASE_URL"),
            (["DATABASE_URL": "postgres://bob:Sup3rS3cret@[::1/db"], "DATABASE_URL"),
            (["DATABASE_URL": "postgres://bob:Sup3rS3cret@a,b/db"], "DATABASE_URL"),
            (["PGUSER": "bob", "PGPASSWORD": "Sup3rS3cret", "PGPORT": "x"], "PGPORT"),
            (["PGUSER": "bob", "PGPASSWORD": "Sup3rS3cret", "PGSSLMODE": "on"], "PGSSLMODE"),
            (["PGPASSWORD": "Sup3rS3cret"], "PGUSER"),
        ])
    func malformed(environment: [String: String], variable: String) throws {
        let error = try #require(throws: DatabaseSettingsError.self) { try DatabaseSettings(environment: environment) }
        #expect(error.variable == variable)
        #expect(error.description.hasPrefix(variable))
        #expect(!error.description.contains("Sup3rS3cret"))
        #expect(!String(reflecting: error).contains("Sup3rS3cret"))
    }

    @Test("description redacts the password")
    func redacted() throws {
        let settings = try DatabaseSettings(environment: [
            "DATABASE_URL": "postgres://bob:Sup3rS3cret@db:5432/app?sslmode=disable&search_path=s1"
        ])
        #expect(settings.description == "postgres://bob:***@db:5432/app?sslmode=disable&search_path=s1")
        #expect(settings.password == "Sup3rS3cret")
        #expect(!"\(settings)".contains("Sup3rS3cret"))
        #expect(!String(reflecting: settings).contains("Sup3rS3cret"))
        var dumped = ""
        dump(settings, to: &dumped)
        #expect(!dumped.contains("Sup3rS3cret"))
    }
}
