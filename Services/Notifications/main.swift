import ColonyPlatform
import NotificationsService

// colony-notifications [serve] | deliveries USER_ID [--app APP] [--limit N] (NotificationsCommandLine).
await ServiceCommandLine.main(NotificationsCommandLine.self)
