import NIOCore
import NIOPosix

/// Where the process's async work runs: on NIO's event loops, the threads that read and write every socket
/// (AsyncHTTPClient's and PostgresNIO's), instead of Swift Concurrency's own pool. A night is a stream of small answers:
/// with two pools, every answer hops from the event loop that read it to a pool thread that decodes it and back, two
/// thread switches per request; with one, none.
public enum EventLoopConcurrency {
    /// Makes NIO's event loops Swift Concurrency's global executor. Call it first thing in `main`, on the main
    /// thread, once, before any task starts. False (the process keeps Swift's pool, which works the same, more slowly)
    /// when the runtime does not allow it. NIO finds the runtime's enqueue hook with `dlsym`, so a binary with the
    /// Swift runtime linked in (`scripts/release`: the hook is local there) keeps Swift's pool; a build linked to the
    /// toolchain's shared runtime (`swift build`, the bench) gets the event loops.
    @discardableResult
    public static func install() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
