import Foundation

/// Google's error bodies and time format, as the simulator writes them.
extension GooglePlaySimulator {
    static func error(_ code: Int, _ message: String, status: String, reason: String? = nil) -> SimulatorResponse {
        var detail: [String: Any] = ["code": code, "message": message, "status": status]
        if let reason { detail["errors"] = [["message": message, "domain": "androidpublisher", "reason": reason]] }
        return .json(code, (try? JSONSerialization.data(withJSONObject: ["error": detail], options: [.sortedKeys])) ?? Data())
    }

    static func statusName(_ code: Int) -> String {
        switch code {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        case 429: "RESOURCE_EXHAUSTED"
        case 503: "UNAVAILABLE"
        default: "INTERNAL"
        }
    }

    /// RFC 3339 with milliseconds, as Google writes times.
    public static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!))
    }
}
