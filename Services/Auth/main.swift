import AuthService
import ColonyPlatform

// colony-auth [serve] | keys [--rotate] | import --app APP --file FILE (AuthCommandLine).
await ServiceCommandLine.main(AuthCommandLine.self)
