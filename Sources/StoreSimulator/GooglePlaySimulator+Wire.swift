import Foundation
import SubreconCore

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

    /// RFC 3339 with three fraction digits, as Google writes times. Google writes the millisecond it means; a formatter
    /// given binary floating point truncates (…58.27 → …58.269), so the instant is written from the rounded millisecond
    /// count, as the reports write it.
    public static func rfc3339(_ date: Date) -> String {
        let text = ISO8601.string(date)
        return text.contains(".") ? text : text.dropLast() + ".000Z"
    }
}
