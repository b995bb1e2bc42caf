import Foundation
import Logging
import Synchronization

/// Bootstraps swift-log once: `text` (default on a terminal) or `json` (one object a line, for cron and log shippers).
enum LogSetup {
    private static let done = Mutex(false)

    static func bootstrap(format: String?) {
        let already = done.withLock { done in
            defer { done = true }
            return done
        }
        if already { return }
        let json = format?.lowercased() == "json" || (format == nil && isatty(STDERR_FILENO) == 0)
        let level: Logger.Level = ProcessInfo.processInfo.environment["SUBRECON_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// One JSON object a line on standard error: time, level, label, message and the metadata keys.
struct JSONLogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: String] = [
            "ts": Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            "level": event.level.rawValue, "label": label, "msg": event.message.description,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = "\(value)"
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(object) else { return }
        data.append(0x0A)
        FileHandle.standardError.write(data)
    }
}
