import Testing

/// Every test that touches the shared PostgreSQL cluster, run one at a time: the outage test stops
/// the cluster, which would fail any PostgreSQL test running beside it.
@Suite("Storage", .serialized)
struct StorageSuite {}
