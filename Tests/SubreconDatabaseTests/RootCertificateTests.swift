import Foundation
import SubreconDatabase
import SubreconPorts
import Testing

/// `sslrootcert` is checked when the settings are built (docs/CONTRACT.md, "Database"): a file the job cannot read,
/// or one without a PEM certificate, is a configuration problem naming the setting (exit 78), never a refused
/// connection; the password never appears in the message.
@Suite("sslrootcert is checked at start")
struct RootCertificateTests {
    static func settings(_ query: String, extra: [String: String] = [:]) -> Result<DatabaseSettings, DatabaseSettingsError> {
        Result { () throws(DatabaseSettingsError) in
            try DatabaseSettings(environment: ["DATABASE_URL": "postgres://job:s3cret@db.example:5432/app?\(query)"].merging(extra) { $1 })
        }
    }

    @Test("a missing file is named with its variable; an empty or non-PEM file too; a PEM file is accepted")
    func checked() throws {
        let missing = "/nonexistent/root-\(UUID().uuidString).pem"
        guard case .failure(let error) = Self.settings("sslmode=verify-full&sslrootcert=\(missing)") else {
            Issue.record("a missing sslrootcert was accepted")
            return
        }
        #expect(error.variable == "DATABASE_URL" && error.reason.contains("sslrootcert '\(missing)'"), "\(error)")
        #expect(!"\(error)".contains("s3cret"))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rootcert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let junk = folder.appendingPathComponent("junk.pem")
        try Data("not a certificate\n".utf8).write(to: junk)
        guard case .failure(let notPEM) = Self.settings("sslmode=verify-ca&sslrootcert=\(junk.path)") else {
            Issue.record("a file without a certificate was accepted")
            return
        }
        #expect(notPEM.reason.contains("no PEM certificate"), "\(notPEM)")

        guard case .failure(let fromVariable) = Self.settings("sslmode=verify-full", extra: ["PGSSLROOTCERT": missing]) else {
            Issue.record("a missing PGSSLROOTCERT was accepted")
            return
        }
        #expect(fromVariable.variable == "PGSSLROOTCERT")

        let pem = folder.appendingPathComponent("root.pem")
        try Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8).write(to: pem)
        #expect((try? Self.settings("sslmode=verify-full&sslrootcert=\(pem.path)").get()) != nil)
        // Without verification the file is not used, so not checked (libpq reads it only to verify).
        #expect((try? Self.settings("sslmode=require&sslrootcert=\(missing)").get()) != nil)
    }
}
