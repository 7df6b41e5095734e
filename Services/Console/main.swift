import ColonyPlatform
import ConsoleService

// colony-console: serves the operators' web console; everything it reads is in ConsoleLaunch.
await ServiceCommandLine.main(ServeCommand<ConsoleLaunch>.self)
