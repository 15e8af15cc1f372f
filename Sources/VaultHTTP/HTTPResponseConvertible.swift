/// An error that decides its own HTTP response.
///
/// Handlers throw these; the router turns any other error into a 500 and logs it.
public protocol HTTPResponseConvertible: Error {
    /// The response this error answers with.
    var response: HTTPResponse { get }
}
