import ChatService
import ColonyPlatform

// colony-chat: serves; everything it reads is in ChatLaunch.
await ServiceCommandLine.main(ServeCommand<ChatLaunch>.self)
