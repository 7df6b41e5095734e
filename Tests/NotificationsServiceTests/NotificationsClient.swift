import CirclesAPI
import ColonyClientTesting
import ColonyTesting
import NotificationsAPI

// The generated client's names, in a file that does not see the service's own generated types
// (`@testable import NotificationsService` has a `NotificationsAPI` type and `Components` too).
typealias NotificationsClient = NotificationsAPI.Client
typealias Schemas = NotificationsAPI.Components.Schemas
typealias ClientOperations = NotificationsAPI.Operations

extension RunningService {
    /// Notifications' generated client as `user` (nil: no token).
    func notificationsClient(as user: User?) -> NotificationsClient { NotificationsClient(connection(as: user)) }
}

extension RunningService {
    /// Circles' generated client as `user`: the end-to-end and read-your-writes tests run circles beside notifications.
    func circlesClient(as user: User?) -> CirclesAPI.Client { CirclesAPI.Client(connection(as: user)) }
}
