import RealtimeService
import ColonyPlatform

// colony-realtime: serves; everything it reads is in RealtimeLaunch.
await ServiceCommandLine.main(ServeCommand<RealtimeLaunch>.self)
