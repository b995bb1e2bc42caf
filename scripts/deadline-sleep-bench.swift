// What a cut-short deadline sleep leaves in memory (BENCHMARKS.md section 14). Each iteration races a piece of work
// that ends at once against a 120 s deadline, as a user's lookup deadline does (`LookupDeadline`), then cancels the
// sleep; `whole` sleeps toward the deadline in one sleep, `sliced` in slices of at most 1 s (what the job did before
// its deadlines became timers on NIO's event loops, `DeadlineAlarm`: section 16).
//
//   swiftc -O scripts/deadline-sleep-bench.swift -o /tmp/deadline-sleep-bench
//   /tmp/deadline-sleep-bench whole 100000; /tmp/deadline-sleep-bench sliced 100000
import Foundation

func rssMB() -> Double {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kb = Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "0") ?? 0
        return kb / 1024
    }
    return 0
}

func sliced(_ deadline: ContinuousClock.Instant) async throws {
    while true {
        let now = ContinuousClock.now
        guard now < deadline else { return }
        try await Task.sleep(until: min(deadline, now.advanced(by: .seconds(1))), clock: .continuous)
    }
}

let mode = CommandLine.arguments[1]
let count = Int(CommandLine.arguments[2])!
let start = rssMB()
let t0 = ContinuousClock.now
for _ in 0..<count {
    _ = await withTaskGroup(of: Int.self) { group in
        group.addTask { 7 }
        group.addTask {
            let deadline = ContinuousClock.now.advanced(by: .seconds(120))
            if mode == "sliced" { try? await sliced(deadline) } else { try? await Task.sleep(until: deadline, clock: .continuous) }
            return 0
        }
        let first = await group.next()!
        group.cancelAll()
        return first
    }
}
print("\(mode) \(count) waits cut short in \(ContinuousClock.now - t0): RSS \(String(format: "%.1f", start)) -> \(String(format: "%.1f", rssMB())) MB")
