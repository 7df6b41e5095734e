import NearbyService
import ColonyPlatform

// colony-nearby: serves; everything it reads is in NearbyLaunch.
await ServiceCommandLine.main(ServeCommand<NearbyLaunch>.self)
