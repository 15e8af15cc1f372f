/// A response body in a file: `length` bytes from `offset` of an open descriptor, which libmicrohttpd sends with
/// `sendfile` on plain HTTP (from the page cache to the socket, never through the process); under TLS the transport
/// reads it in with one `pread` and sends it as a buffer (`HTTPServer.nativeResponse(readingIn:)`).
///
/// The descriptor stays with its owner until the transport takes it (`takeDescriptor`), once, to hand to
/// libmicrohttpd, which closes it when the response is done; a body never queued stays with its owner, who closes it.
public struct HTTPFileBody: Sendable {
    /// Where the body starts in the file.
    public let offset: Int64
    /// The body's length in bytes.
    public let length: Int
    /// Hands the descriptor over; nil when it was taken before.
    public let takeDescriptor: @Sendable () -> Int32?

    /// A body of `length` bytes from `offset` in the file whose descriptor `takeDescriptor` hands over.
    public init(offset: Int64, length: Int, takeDescriptor: @escaping @Sendable () -> Int32?) {
        self.offset = offset
        self.length = length
        self.takeDescriptor = takeDescriptor
    }
}
