import Foundation
import Logging
import StoreSimulator
import SubreconApp
import SubreconCommand
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import Testing

/// Every substring of `secret` at least 3 scalars long that `text` contains.
private func leaks(_ secret: String, in text: String) -> [String] {
    let scalars = Array(secret.unicodeScalars)
    guard scalars.count >= 3 else { return [] }
    return (0...(scalars.count - 3)).compactMap { start in
        var part = String.UnicodeScalarView()
        part.append(contentsOf: scalars[start..<(start + 3)])
        return text.contains(String(part)) ? String(part) : nil
    }
}

@Suite("Secrets never reach a message: DATABASE_URL passwords through the exit 78 and 69 lines, Pushgateway credentials")
struct SecretsTests {
    /// Hostile passwords, as they may sit in the URL (raw) and what they are.
    static let passwords: [(url: String, secret: String)] = [
        ("Zq?Xv=Wk&Jy", "Zq?Xv=Wk&Jy"), ("Zq#Xv/Wk", "Zq#Xv/Wk"), ("Zq@Xv@Wk:Jy", "Zq@Xv@Wk:Jy"),
        ("Zq Xv Wk Ωжé字", "Zq Xv Wk Ωжé字"), ("Zq/Xv?Wk=Jy&Qx#Vb", "Zq/Xv?Wk=Jy&Qx#Vb"), ("Zq%25Xv%40Wk", "Zq%Xv@Wk"),
        ("Zq%Xv%zzWk", "Zq%Xv%zzWk"),
    ]

    /// What the executable prints for a failure of `Commands.run` (`subrecon: LINE`) and the exit status.
    func failureLine(_ env: [String: String]) async -> (SubreconCore.ExitStatus, String)? {
        let options = RunOptions(asOf: Date(), reportDirectory: FileManager.default.temporaryDirectory)
        do {
            _ = try await Commands.run(
                environment: ProcessEnvironment(env), options: options, logger: Logger(label: "subrecon.secrets.tests"))
            return nil
        } catch let error as ConfigError {
            return (.config, error.description)
        } catch let failure as CommandFailure {
            return (failure.status, failure.description)
        } catch {
            return (.userErrors, String(describing: error))
        }
    }

    @Test("configuration errors (exit 78) show no part of the password", arguments: 0..<passwords.count)
    func configErrors(index: Int) async throws {
        let (raw, secret) = Self.passwords[index]
        for url in [
            "postgres://subrecon:\(raw)@127.0.0.1:notaport/app", "postgres://subrecon:\(raw)@127.0.0.1/app?sslmode=sometimes",
            "postgres://subrecon:\(raw)%zz@127.0.0.1/app",
        ] {
            let line = try #require(await failureLine(["DATABASE_URL": url, "REVENUECAT_API_KEY": "sk_test_secrets"]))
            #expect(line.0 == .config)
            #expect(leaks(secret, in: line.1).isEmpty && leaks(raw, in: line.1).isEmpty, "leaked: \(line.1)")
        }
    }

    @Test("an unreachable database (exit 69) is named by host and port only", arguments: 0..<passwords.count - 1)
    func unreachable(index: Int) async throws {
        let (raw, secret) = Self.passwords[index]
        let url = "postgres://subrecon:\(raw)@127.0.0.1:1/app?sslmode=disable"
        let line = try #require(await failureLine(["DATABASE_URL": url, "REVENUECAT_API_KEY": "sk_test_secrets"]))
        #expect(line.0 == .unavailable, "\(line.1)")
        #expect(line.1.contains("127.0.0.1:1"))
        #expect(leaks(secret, in: line.1).isEmpty && leaks(raw, in: line.1).isEmpty, "leaked: \(line.1)")
    }

    @Test("URLs with user info are redacted to scheme, host and port whatever the password holds")
    func redaction() {
        for (raw, secret) in Self.passwords {
            let url = "https://metrics:\(raw)@push.example.com:9091/prefix?x=1"
            #expect(MetricsPublisher.redacted(url) == "https://push.example.com:9091")
            #expect(leaks(secret, in: MetricsPublisher.redacted(url)).isEmpty)
            #expect(MetricsPublisher.hasUserInfo(url))
        }
        #expect(!MetricsPublisher.hasUserInfo("http://push.example.com:9091"))
    }

    @Test("Pushgateway credentials come from the environment (or _FILE), are sent as basic auth, and are never shown")
    func pushgatewayCredentials() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let passwordFile = folder.appendingPathComponent("push-password")
        try Data("Zq?Xv#Wk@Jy\n".utf8).write(to: passwordFile)
        let env = ProcessEnvironment(["SUBRECON_PUSHGATEWAY_USER": "metrics", "SUBRECON_PUSHGATEWAY_PASSWORD_FILE": passwordFile.path])
        let credentials = try #require(try PushgatewayCredentials.load(env))
        #expect(credentials.password == "Zq?Xv#Wk@Jy")
        #expect(leaks("Zq?Xv#Wk@Jy", in: credentials.description).isEmpty)
        #expect(try PushgatewayCredentials.load(ProcessEnvironment([:])) == nil)
        #expect(throws: ConfigError.self) { try PushgatewayCredentials.load(ProcessEnvironment(["SUBRECON_PUSHGATEWAY_PASSWORD": "x"])) }
        #expect(throws: ConfigError.self) { try PushgatewayCredentials.load(ProcessEnvironment(["SUBRECON_PUSHGATEWAY_USER": "x"])) }
        #expect(throws: ConfigError.self) {
            try PushgatewayCredentials.load(ProcessEnvironment(["SUBRECON_PUSHGATEWAY_USER": "a:b", "SUBRECON_PUSHGATEWAY_PASSWORD": "x"]))
        }

        try Data("# TYPE subrecon_run_exit_code gauge\nsubrecon_run_exit_code{shard=\"0_1\"} 0.0\n".utf8)
            .write(to: folder.appendingPathComponent("metrics.prom"))
        let gateway = RecordingPushgateway()
        let server = try await SimulatorServer.start(routes: [gateway])
        let ok = await MetricsPublisher.publish(
            runFolder: folder, shard: .all, metricsFile: nil, pushgatewayURL: server.baseURL, credentials: credentials,
            logger: Logger(label: "subrecon.secrets.tests"))
        let requests = await gateway.requests
        await server.shutdown()
        #expect(ok)
        #expect(requests.count == 1)
        let expected = "Basic " + Data("metrics:Zq?Xv#Wk@Jy".utf8).base64EncodedString()
        #expect(requests.first?.headers["authorization"] == expected)
    }
}
