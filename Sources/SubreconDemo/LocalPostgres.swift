import Foundation
import Logging
import SubreconApp
import SubreconCore
import SubreconJob

/// A throwaway PostgreSQL cluster from the system's server binaries, for `subrecon demo`.
///
/// Lives in a fresh temporary folder, listens on 127.0.0.1 on a free port with trust authentication,
/// runs as the `postgres` OS user when subrecon runs as root (the server refuses root), and is removed by `stop()`.
public final class LocalPostgres: Sendable {
    public let directory: URL
    public let port: Int
    private let binDirectory: String
    private let asPostgresUser: Bool

    /// `postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable`
    public var url: String { url(database: "postgres") }

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE?sslmode=disable`
    public func url(database: String) -> String { "postgres://postgres@127.0.0.1:\(port)/\(database)?sslmode=disable" }

    /// Creates another (empty) database in this cluster with `createdb`.
    public func createDatabase(_ name: String) throws {
        try postgres("createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", name])
    }

    private init(directory: URL, port: Int, binDirectory: String, asPostgresUser: Bool) {
        self.directory = directory
        self.port = port
        self.binDirectory = binDirectory
        self.asPostgresUser = asPostgresUser
    }

    /// The newest `/usr/lib/postgresql/N/bin` holding `initdb`, or `SUBRECON_PG_BIN`.
    static func findBinaries(_ environment: ProcessEnvironment) -> String? {
        if let explicit = environment.string("SUBRECON_PG_BIN") { return explicit }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.compactMap(Int.init).sorted(by: >) {
            let bin = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: "\(bin)/initdb") { return bin }
        }
        return nil
    }

    public static func start(environment: ProcessEnvironment, logger: Logger) throws -> LocalPostgres {
        guard let bin = findBinaries(environment) else {
            throw CommandFailure(
                .unavailable,
                "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin; install them (apt-get install -y postgresql-15) or set SUBRECON_PG_BIN"
            )
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-demo-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let asPostgres = getuid() == 0
        let port = try freePort()
        let cluster = LocalPostgres(directory: directory, port: port, binDirectory: bin, asPostgresUser: asPostgres)
        do {
            if asPostgres { try run("/bin/chown", ["-R", "postgres:postgres", directory.path], cwd: directory.path) }
            let data = directory.appendingPathComponent("data").path
            try cluster.postgres("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
            let options =
                "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            try cluster.postgres(
                "pg_ctl", ["-D", data, "-o", options, "-l", directory.appendingPathComponent("server.log").path, "-w", "-t", "60", "start"])
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw CommandFailure(.unavailable, "could not start a local PostgreSQL: \(error)")
        }
        logger.info("local PostgreSQL started", metadata: ["db.port": "\(port)", "db.directory": "\(directory.path)"])
        return cluster
    }

    /// Stops the server and removes its folder.
    public func stop() {
        try? postgres("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    private func postgres(_ tool: String, _ arguments: [String]) throws {
        let path = "\(binDirectory)/\(tool)"
        if asPostgresUser {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", path] + arguments, cwd: directory.path)
        } else {
            try Self.run(path, arguments, cwd: directory.path)
        }
    }

    /// Runs a program to completion with its output appended to `commands.log` in the cluster folder.
    /// (posix_spawn + waitpid: `pg_ctl` leaves a daemon behind, which must not inherit a pipe we wait on.)
    private static func run(_ executable: String, _ arguments: [String], cwd: String? = nil) throws {
        let log = (cwd ?? FileManager.default.temporaryDirectory.path) + "/commands.log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = (argv + [nil]).withUnsafeBufferPointer { buffer in
            posix_spawn(&pid, executable, &actions, nil, UnsafeMutablePointer(mutating: buffer.baseAddress!), environ)
        }
        guard spawned == 0 else {
            throw CommandFailure(.unavailable, "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").suffix(5).joined(separator: " | ") ?? ""
            throw CommandFailure(
                .unavailable, "\((executable as NSString).lastPathComponent) \(arguments.first ?? "") failed (status \(status)): \(text)")
        }
    }

    /// Asks the kernel for a free TCP port on loopback.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CommandFailure(.unavailable, "cannot open a socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw CommandFailure(.unavailable, "cannot bind a loopback port") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
