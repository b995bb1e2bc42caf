import SubreconDatabase
import SubreconPorts
import Testing

/// Every substring of `secret` at least 3 scalars long that `text` contains.
func leakedParts(of secret: String, in text: String) -> [String] {
    let scalars = Array(secret.unicodeScalars)
    var leaks: [String] = []
    guard scalars.count >= 3 else { return text.contains(secret) ? [secret] : [] }
    for start in 0...(scalars.count - 3) {
        var part = String.UnicodeScalarView()
        part.append(contentsOf: scalars[start..<(start + 3)])
        if text.contains(String(part)) { leaks.append(String(part)) }
    }
    return leaks
}

@Suite("DATABASE_URL passwords with any characters: parsed right, never echoed")
struct DatabaseURLSecretTests {
    /// Raw (unencoded) passwords a person might paste into a URL; none has a 3-scalar run an error line holds.
    static let rawPasswords = [
        "Zq?Xv=Wk&Jy", "Zq#Xv/Wk", "Zq@Xv@Wk:Jy", "Zq Xv\tWk Ωжé字", "Zq/Xv?Wk=Jy&Qx#Vb", "Zq::Xv@@Wk//Jy??",
        "ZqXvWkJy", "Zq'Xv\"Wk\\Jy", "Zq,Xv;Wk[Jy]",
    ]

    @Test("the user info is split off at the last '@': host, port, database and query come from after it", arguments: rawPasswords)
    func parsesRawPassword(password: String) throws {
        let settings = try DatabaseSettings(environment: [
            "DATABASE_URL": "postgres://subrecon:\(password)@db.internal:6543/app?sslmode=disable&application_name=nightly"
        ])
        #expect(settings.password == password)
        #expect(settings.username == "subrecon")
        #expect(settings.host == "db.internal" && settings.port == 6543 && settings.database == "app")
        #expect(settings.sslMode == .disable && settings.applicationName == "nightly")
        #expect(leakedParts(of: password, in: settings.description).isEmpty)
        #expect(leakedParts(of: password, in: String(reflecting: settings)).isEmpty)
    }

    @Test(
        "a malformed URL around a hostile password: the error names the variable and shows none of the password",
        arguments: rawPasswords + ["Zq%Xv%zzWk", "Zq%"])
    func errorsHideThePassword(password: String) {
        let broken = [
            "postgres://subrecon:\(password)@db.internal:notaport/app",
            "postgres://subrecon:\(password)@db.internal/app?sslmode=sometimes",
            "postgres://subrecon:\(password)@db.internal/a/b",
            "postgres://subrecon:\(password)@h1,h2/app",
            "postgres://subrecon:\(password)%zz@db.internal/app",
            "mysql://subrecon:\(password)@db.internal/app",
            "postgres://subrecon:\(password)@[::1/app",
        ]
        for url in broken {
            do {
                _ = try DatabaseSettings(environment: ["DATABASE_URL": url])
                Issue.record("\(url.count)-character URL was accepted")
            } catch {
                #expect(error.variable == "DATABASE_URL")
                #expect(leakedParts(of: password, in: error.description).isEmpty, "leaked in: \(error.description)")
            }
        }
    }

    @Test("a percent-encoded password is decoded; a raw '%' that is not an escape is an error without echo")
    func percent() throws {
        let settings = try DatabaseSettings(environment: ["DATABASE_URL": "postgres://u:Zq%25Xv%40Wk@h/app"])
        #expect(settings.password == "Zq%Xv@Wk")
        #expect(throws: DatabaseSettingsError.self) { try DatabaseSettings(environment: ["DATABASE_URL": "postgres://u:Zq%Xv@h/app"]) }
    }
}
