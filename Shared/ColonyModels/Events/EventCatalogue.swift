/// Every event type Colony knows, by publishing service. It grows as each service lands; a
/// consumer can check that a type it subscribes to is one someone publishes.
public enum EventCatalogue {
    public static let types: [ColonyService: [EventType]] = [
        .auth: [.userRegistered, .userUpdated, .userDeleted],
    ]

    public static func source(of type: EventType) -> ColonyService? {
        types.first { $0.value.contains(type) }?.key
    }
}
