import CirclesService
import ColonyPlatform

// colony-circles: serves; everything it reads is in CirclesLaunch.
await ServiceCommandLine.main(ServeCommand<CirclesLaunch>.self)
