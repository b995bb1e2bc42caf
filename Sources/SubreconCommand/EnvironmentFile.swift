import Foundation
import SubreconCore
import SubreconJob

/// The environment file `--env-file PATH` names (docs/CONTRACT.md, "Environment"): systemd's `EnvironmentFile`
/// syntax, read, never run. One `KEY=value` a line; `#` and `;` comment lines (a `#` later in a line is part of the
/// value); values unquoted (spaces inside kept, surrounding ones dropped), in `'single'` or `"double"` quotes (`\"`,
/// `\\`, `\$` and `` \` `` escaped inside double quotes; quoted pieces may be glued together, `'it'"'"'s'); a trailing
/// `\` continues the line; `export KEY=value` accepted; CRLF line endings and a leading BOM fine; `$` always literal.
/// A line that is not an assignment, a bad name, an unclosed quote, text after a closing quote, a NUL byte or invalid
/// UTF-8 is refused naming the line, never the value.
public enum EnvironmentFile {
    public struct Assignment: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
        /// The name only: a value may be a secret.
        public var description: String { "\(name)=…" }
    }

    /// Why a file is refused: its line and the problem, never a value.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var problem: String
        public init(line: Int, problem: String) {
            self.line = line
            self.problem = problem
        }
        public var description: String { "line \(line): \(problem)" }
    }

    /// The file's assignments, in order (a name set twice appears twice; the last one wins in `merged`).
    public static func parse(_ bytes: [UInt8]) throws(Refusal) -> [Assignment] {
        var bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        try checkEncoding(bytes)
        var parser = Parser()
        var index = bytes.startIndex
        while index < bytes.endIndex {
            var byte = bytes[index]
            index += 1
            // CRLF reads as LF.
            if byte == .cr, index < bytes.endIndex, bytes[index] == .lf {
                byte = .lf
                index += 1
            }
            try parser.read(byte)
        }
        return try parser.finish()
    }

    public static func parse(_ text: String) throws(Refusal) -> [Assignment] { try parse(Array(text.utf8)) }

    /// Reads and parses the file at `path`; every failure is a configuration error (78) naming the file (and the line).
    public static func load(path: String) throws(ConfigError) -> [Assignment] {
        let subject = "environment file \(path)"
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigError(subject, "does not exist")
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(subject, "cannot be read")
        }
        do {
            return try parse(Array(data))
        } catch {
            throw ConfigError(subject, error.description)
        }
    }

    /// `environment` with the assignments applied in order: the file's values win.
    public static func merged(_ environment: [String: String], _ assignments: [Assignment]) -> [String: String] {
        var result = environment
        for assignment in assignments { result[assignment.name] = assignment.value }
        return result
    }

    /// The global option `--env-file PATH` (or `--env-file=PATH`, any number, anywhere before a `--`) taken out of
    /// a command line: the paths in order and the arguments left for the command. A missing path is a usage error.
    public static func option(in arguments: [String]) throws(CommandFailure) -> (paths: [String], rest: [String]) {
        var paths: [String] = []
        var rest: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                rest += arguments[(index - 1)...]
                break
            }
            if argument == "--env-file" {
                guard index < arguments.endIndex, !arguments[index].isEmpty else {
                    throw CommandFailure(.usage, "--env-file needs the path of an environment file")
                }
                paths.append(arguments[index])
                index += 1
            } else if argument.hasPrefix("--env-file=") {
                let path = String(argument.dropFirst("--env-file=".count))
                if path.isEmpty { throw CommandFailure(.usage, "--env-file needs the path of an environment file") }
                paths.append(path)
            } else {
                rest.append(argument)
            }
        }
        return (paths, rest)
    }

    /// Invalid UTF-8 or a NUL byte (no environment variable can hold one), refused naming the first line holding it.
    static func checkEncoding(_ bytes: [UInt8]) throws(Refusal) {
        if !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil { return }
        var line = 1
        for piece in bytes.split(separator: .lf, omittingEmptySubsequences: false) {
            if piece.contains(0) { throw Refusal(line: line, problem: "a NUL byte") }
            if String(validating: piece, as: UTF8.self) == nil {
                throw Refusal(line: line, problem: "not UTF-8 text (an invalid byte sequence)")
            }
            line += 1
        }
    }
}

extension UInt8 {
    fileprivate static let lf = UInt8(ascii: "\n")
    fileprivate static let cr = UInt8(ascii: "\r")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let singleQuote = UInt8(ascii: "'")
    fileprivate static let doubleQuote = UInt8(ascii: "\"")

    /// Blanks around a key or an unquoted value (a lone CR among them).
    fileprivate var isBlank: Bool { self == UInt8(ascii: " ") || self == UInt8(ascii: "\t") || self == .cr }
    /// A shell's `[[:space:]]`: the blanks, LF, VT and FF.
    fileprivate var isSpace: Bool { isBlank || self == .lf || self == 0x0B || self == 0x0C }
    fileprivate var isLetter: Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self | 0x20) }
}

/// The parser, byte by byte (a state machine; every byte that ends a state is ASCII, so each value stays UTF-8).
private struct Parser {
    enum State {
        case preKey, comment, key, preValue, value, valueEscape, single, double, doubleEscape, afterQuote, afterQuoteSpace
    }

    var state = State.preKey
    var assignments: [EnvironmentFile.Assignment] = []
    var key: [UInt8] = []
    var value: [UInt8] = []
    /// How much of an unquoted value counts: up to its last byte that is not a trailing blank.
    var keep = 0
    var line = 1
    /// The line the assignment began on: the one its errors name.
    var start = 1

    mutating func read(_ byte: UInt8) throws(EnvironmentFile.Refusal) {
        switch state {
        case .preKey: readBeforeKey(byte)
        case .comment: if byte == .lf { newLine() }
        case .key: try readKey(byte)
        case .preValue: try readBeforeValue(byte)
        case .value: try readValue(byte)
        case .valueEscape:
            state = .value
            if byte == .lf {
                line += 1
            } else {
                value.append(byte)
                keep = value.count
            }
        case .single: readQuoted(byte, closing: .singleQuote)
        case .double: readQuoted(byte, closing: .doubleQuote)
        case .doubleEscape: readDoubleEscape(byte)
        case .afterQuote, .afterQuoteSpace: try readAfterQuote(byte)
        }
    }

    /// The assignments once every byte is read: a quote still open is refused naming the line it opened on.
    mutating func finish() throws(EnvironmentFile.Refusal) -> [EnvironmentFile.Assignment] {
        switch state {
        case .single, .double, .doubleEscape:
            throw EnvironmentFile.Refusal(line: start, problem: "the quote opened on this line is never closed")
        default:
            // The last line need not end with a newline (nor a continued one hold another line).
            try read(.lf)
            if state != .preKey && state != .comment { try read(.lf) }
            return assignments
        }
    }

    mutating func newLine() {
        state = .preKey
        line += 1
    }

    mutating func readBeforeKey(_ byte: UInt8) {
        switch byte {
        case .lf: line += 1
        case _ where byte.isBlank: break
        case UInt8(ascii: "#"), UInt8(ascii: ";"): state = .comment
        default:
            state = .key
            key = [byte]
            start = line
        }
    }

    mutating func readKey(_ byte: UInt8) throws(EnvironmentFile.Refusal) {
        switch byte {
        case .lf: throw EnvironmentFile.Refusal(line: line, problem: "not a NAME=value assignment (no '=')")
        case UInt8(ascii: "="):
            state = .preValue
            value = []
            keep = 0
        default: key.append(byte)
        }
    }

    mutating func readBeforeValue(_ byte: UInt8) throws(EnvironmentFile.Refusal) {
        switch byte {
        case .lf: try push(value)
        case _ where byte.isBlank: break
        case .singleQuote: state = .single
        case .doubleQuote: state = .double
        case .backslash: state = .valueEscape
        default:
            state = .value
            value = [byte]
            keep = 1
        }
    }

    mutating func readValue(_ byte: UInt8) throws(EnvironmentFile.Refusal) {
        switch byte {
        case .lf: try push(Array(value[..<keep]))
        case .backslash: state = .valueEscape
        case _ where byte.isBlank: value.append(byte)
        default:
            value.append(byte)
            keep = value.count
        }
    }

    mutating func readQuoted(_ byte: UInt8, closing: UInt8) {
        if byte == .lf { line += 1 }
        if byte == closing {
            state = .afterQuote
        } else if byte == .backslash && closing == .doubleQuote {
            state = .doubleEscape
        } else {
            value.append(byte)
        }
    }

    mutating func readDoubleEscape(_ byte: UInt8) {
        state = .double
        switch byte {
        case .doubleQuote, .backslash, UInt8(ascii: "`"), UInt8(ascii: "$"): value.append(byte)
        case .lf: line += 1
        default: value += [.backslash, byte]
        }
    }

    /// Quoted pieces may be glued together; anything else after a closing quote is read differently by a shell and by
    /// systemd, so it is refused.
    mutating func readAfterQuote(_ byte: UInt8) throws(EnvironmentFile.Refusal) {
        switch byte {
        case .lf: try push(value)
        case _ where byte.isBlank: state = .afterQuoteSpace
        case .singleQuote where state == .afterQuote: state = .single
        case .doubleQuote where state == .afterQuote: state = .double
        default: throw EnvironmentFile.Refusal(line: line, problem: "text after the closing quote")
        }
    }

    /// One assignment ends: `export ` before the name is dropped, and the name must be a variable name.
    mutating func push(_ value: [UInt8]) throws(EnvironmentFile.Refusal) {
        var name = key
        while let last = name.last, last.isSpace { name.removeLast() }
        if name.starts(with: Array("export".utf8)), name.count > 6, name[6].isSpace {
            name = Array(name.dropFirst(6).drop { $0.isSpace })
        }
        guard let first = name.first, first == UInt8(ascii: "_") || first.isLetter,
            name.allSatisfy({ $0 == UInt8(ascii: "_") || $0.isLetter || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { throw EnvironmentFile.Refusal(line: start, problem: "the name before '=' is not a variable name") }
        assignments.append(EnvironmentFile.Assignment(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        newLine()
    }
}
