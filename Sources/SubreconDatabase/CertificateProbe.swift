import Foundation
import PostgresNIO
import SubreconPorts

extension CertificateRefusal {
    /// Tells why a refused chain (`unverified`) was refused: connects to the server once more, asks for TLS
    /// (PostgreSQL's `SSLRequest`) and reads the certificate it presents without accepting it, so the handshake ends
    /// there (no startup message, no credentials are sent), then judges it by its dates (`judge`). Stays
    /// `unverified` when the certificate cannot be read within 10 s.
    public static func diagnosed(_ refusal: CertificateRefusal, settings: DatabaseSettings, now: Date = Date()) async -> CertificateRefusal
    {
        guard case .unverified(let trusted) = refusal, let host = settings.host else { return refusal }
        guard let leaf = try? await presentedCertificate(host: host, port: settings.port) else { return refusal }
        return judge(
            notBefore: Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore)),
            notAfter: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)), now: now, trusted: trusted)
    }

    /// The leaf certificate the PostgreSQL server at `host:port` presents.
    static func presentedCertificate(host: String, port: Int) async throws -> NIOSSLCertificate {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .noHostnameVerification
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: NIOSSLCertificate.self)
        let bootstrap = ClientBootstrap(group: group).connectTimeout(.seconds(10)).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(CertificateProbe(context: context, promise: promise))
            }
        }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            promise.fail(error)
            throw error
        }
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(10)) { promise.fail(ChannelError.connectTimeout(.seconds(10))) }
        defer {
            timeout.cancel()
            channel.close(promise: nil)
        }
        return try await promise.futureResult.get()
    }
}

/// Sends PostgreSQL's `SSLRequest`; on the server's `S`, starts a TLS handshake whose verification only keeps the
/// leaf certificate and refuses it.
private final class CertificateProbe: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let context: NIOSSLContext
    let promise: EventLoopPromise<NIOSSLCertificate>

    init(context: NIOSSLContext, promise: EventLoopPromise<NIOSSLCertificate>) {
        self.context = context
        self.promise = promise
    }

    func channelActive(context: ChannelHandlerContext) {
        var request = context.channel.allocator.buffer(capacity: 8)
        request.writeInteger(UInt32(8))
        request.writeInteger(UInt32(80_877_103))  // the SSLRequest code
        context.writeAndFlush(wrapOutboundOut(request), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var answer = unwrapInboundIn(data)
        guard answer.readInteger(as: UInt8.self) == UInt8(ascii: "S") else {
            promise.fail(NIOSSLError.handshakeFailed(.sslError([])))
            context.close(promise: nil)
            return
        }
        let promise = self.promise
        do {
            let handler = try NIOSSLClientHandler(
                context: self.context, serverHostname: nil,
                customVerificationCallback: { certificates, verification in
                    if let leaf = certificates.first {
                        promise.succeed(leaf)
                    } else {
                        promise.fail(NIOSSLError.noCertificateToValidate)
                    }
                    verification.succeed(.failed)
                })
            try context.pipeline.syncOperations.addHandler(handler, position: .first)
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        } catch {
            promise.fail(error)
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }
}
