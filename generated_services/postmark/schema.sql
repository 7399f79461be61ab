CREATE TABLE batch_with_template (
	"Messages" JSON, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE bounce (
	"BouncedAt" VARCHAR, 
	"CanActivate" BOOLEAN, 
	"Content" VARCHAR, 
	"Description" VARCHAR, 
	"Details" VARCHAR, 
	"DumpAvailable" BOOLEAN, 
	"Email" VARCHAR, 
	"Inactive" BOOLEAN, 
	"MessageID" VARCHAR, 
	"Name" VARCHAR, 
	"Subject" VARCHAR, 
	"Tag" VARCHAR, 
	"Type" VARCHAR, 
	"TypeCode" INTEGER, 
	"ID" INTEGER NOT NULL, 
	PRIMARY KEY ("ID")
);

CREATE TABLE click (
	"ClickLocation" VARCHAR, 
	"Client" JSON, 
	"Geo" JSON, 
	"OS" JSON, 
	"OriginalLink" VARCHAR, 
	"Platform" VARCHAR, 
	"ReceivedAt" VARCHAR, 
	"Recipient" VARCHAR, 
	"Tag" VARCHAR, 
	"UserAgent" VARCHAR, 
	"MessageID" VARCHAR NOT NULL, 
	PRIMARY KEY ("MessageID")
);

CREATE TABLE inbound_message (
	"Attachments" JSON, 
	"Cc" VARCHAR, 
	"CcFull" JSON, 
	"Date" VARCHAR, 
	"From" VARCHAR, 
	"FromFull" JSON, 
	"FromName" VARCHAR, 
	"MailboxHash" VARCHAR, 
	"OriginalRecipient" VARCHAR, 
	"ReplyTo" VARCHAR, 
	"Status" VARCHAR, 
	"Subject" VARCHAR, 
	"Tag" VARCHAR, 
	"To" VARCHAR, 
	"ToFull" JSON, 
	"MessageID" VARCHAR NOT NULL, 
	PRIMARY KEY ("MessageID")
);

CREATE TABLE inboundrule (
	"Rule" VARCHAR, 
	"ID" INTEGER NOT NULL, 
	PRIMARY KEY ("ID")
);

CREATE TABLE open (
	"Client" JSON, 
	"FirstOpen" BOOLEAN, 
	"Geo" JSON, 
	"OS" JSON, 
	"Platform" VARCHAR, 
	"ReceivedAt" VARCHAR, 
	"Recipient" VARCHAR, 
	"Tag" VARCHAR, 
	"UserAgent" VARCHAR, 
	"MessageID" VARCHAR NOT NULL, 
	PRIMARY KEY ("MessageID")
);

CREATE TABLE outbound_message (
	"Attachments" JSON, 
	"Bcc" JSON, 
	"Cc" JSON, 
	"From" VARCHAR, 
	"ReceivedAt" VARCHAR, 
	"Recipients" JSON, 
	"Status" VARCHAR, 
	"Subject" VARCHAR, 
	"Tag" VARCHAR, 
	"To" JSON, 
	"TrackLinks" VARCHAR, 
	"TrackOpens" BOOLEAN, 
	"MessageID" VARCHAR NOT NULL, 
	PRIMARY KEY ("MessageID")
);

CREATE TABLE server (
	"ApiTokens" JSON, 
	"BounceHookUrl" VARCHAR, 
	"ClickHookUrl" VARCHAR, 
	"Color" VARCHAR, 
	"DeliveryHookUrl" VARCHAR, 
	"InboundAddress" VARCHAR, 
	"InboundDomain" VARCHAR, 
	"InboundHash" VARCHAR, 
	"InboundHookUrl" VARCHAR, 
	"InboundSpamThreshold" INTEGER, 
	"Name" VARCHAR, 
	"OpenHookUrl" VARCHAR, 
	"PostFirstOpenOnly" BOOLEAN, 
	"RawEmailEnabled" BOOLEAN, 
	"ServerLink" VARCHAR, 
	"SmtpApiActivated" BOOLEAN, 
	"TrackLinks" VARCHAR, 
	"TrackOpens" BOOLEAN, 
	"ID" INTEGER NOT NULL, 
	PRIMARY KEY ("ID")
);

CREATE TABLE template (
	"Active" BOOLEAN, 
	"Alias" VARCHAR, 
	"Name" VARCHAR NOT NULL, 
	"TemplateId" FLOAT, 
	"HtmlBody" VARCHAR, 
	"Subject" VARCHAR NOT NULL, 
	"TextBody" VARCHAR, 
	"AssociatedServerId" INTEGER, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

