"""What users and agents say, in each business domain of the simulated apps: the texts a
conversation's turns and an evaluation's expected responses are drawn from."""

SUPPORT_USER_TEXTS = (
    "Hi, where is my order?",
    "I'd like a refund for my last purchase.",
    "The package arrived damaged.",
    "Can you change my delivery address?",
    "My order number is A-48213.",
    "Why was I charged twice?",
    "I never received the confirmation email.",
    "Can I talk to a human, please?",
    "Yes, that's the right order.",
    "Thanks, that's all I needed.",
)
SUPPORT_AGENT_TEXTS = (
    "I can help with that. Could you share your order number?",
    "Your order is on its way and should arrive within two days.",
    "I've issued a refund; you'll see it in 3-5 business days.",
    "I'm sorry about the damaged package. I've opened a ticket for a replacement.",
    "Your delivery address has been updated.",
    "I see a duplicate charge. Let me transfer you to billing.",
    "Is there anything else I can help you with?",
    "Thanks for your patience. Have a great day!",
)
SALES_USER_TEXTS = (
    "Do you have the X200 in stock?",
    "I need a quote for 40 seats.",
    "What's the difference between the Pro and Enterprise plans?",
    "Can we schedule a demo next week?",
    "Is there a discount for annual billing?",
    "We're based in Berlin.",
    "Send the quote to procurement, please.",
    "Great, thank you.",
)
SALES_AGENT_TEXTS = (
    "Happy to help. Which region should I check inventory for?",
    "The X200 is in stock in our Frankfurt warehouse.",
    "I've prepared a quote; it's valid for 30 days.",
    "Enterprise adds SSO, audit logs and a dedicated success manager.",
    "Your demo is booked. You'll get a calendar invite shortly.",
    "Annual billing comes with a 15% discount.",
    "Anything else I can help you with today?",
)
